/**
 * What `npm start` adds to the environment for its embedded, single-machine stack, so a newcomer
 * can go from nothing to a completed subscription with no variables of their own. Every value
 * here is for local development only; a variable already set wins.
 */

/**
 * The verification provider's notification secret on the embedded stack. Public on purpose
 * (README, "A whole subscription locally"): it lets you act as the KYC provider by hand.
 */
export const DEV_PROVIDER_SECRET = 'tranche-dev-provider-secret-not-for-production';

/** The local /metrics ports `npm start` serves: the API's, the worker's own, the worker's Temporal SDK's. */
const LOCAL_METRICS_PORTS = { api: 9464, worker: 9465, temporalSdk: 9466 } as const;

export function embeddedDefaults(env: NodeJS.ProcessEnv): Record<string, string> {
  return {
    // Unset is production (lib/config.ts): npm start is the development opt-in, for this machine only
    // (docs/decisions/0259-production-by-default.md).
    NODE_ENV: env.NODE_ENV ?? 'development',
    // The development identity provider mints tokens for anyone: on only here, where it is the point.
    DEV_IDP_ENABLED: env.DEV_IDP_ENABLED ?? 'true',
    IDENTITY_PROVIDER_WEBHOOK_SECRET: env.IDENTITY_PROVIDER_WEBHOOK_SECRET ?? DEV_PROVIDER_SECRET,
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: env.WEBHOOK_ALLOW_INSECURE_LOOPBACK ?? 'true',
    // Prometheus text on loopback (METRICS_HOST), so a newcomer sees metrics with nothing set.
    METRICS_PORT: env.METRICS_PORT ?? String(LOCAL_METRICS_PORTS.api),
    WORKER_METRICS_PORT: env.WORKER_METRICS_PORT ?? String(LOCAL_METRICS_PORTS.worker),
    TEMPORAL_METRICS_PORT: env.TEMPORAL_METRICS_PORT ?? String(LOCAL_METRICS_PORTS.temporalSdk),
  };
}
