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

/** The organisation the README's first-token command uses (scripts/mint-token.ts's default). */
const DEV_ORG_ID = '00000000-0000-4000-8000-000000000001';

/** The local /metrics ports `npm start` serves: the API's, the worker's own, the worker's Temporal SDK's. */
const LOCAL_METRICS_PORTS = { api: 9464, worker: 9465, temporalSdk: 9466 } as const;

export function embeddedDefaults(env: NodeJS.ProcessEnv): Record<string, string> {
  return {
    // The development identity provider mints tokens for anyone: on only here, where it is the point.
    DEV_IDP_ENABLED: env.DEV_IDP_ENABLED ?? 'true',
    IDENTITY_PROVIDER_WEBHOOK_SECRET: env.IDENTITY_PROVIDER_WEBHOOK_SECRET ?? DEV_PROVIDER_SECRET,
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: env.WEBHOOK_ALLOW_INSECURE_LOOPBACK ?? 'true',
    // The README's organisation's admins read sealed histories in the Web UI through the codec server.
    CODEC_SERVER_ORG_IDS: env.CODEC_SERVER_ORG_IDS ?? DEV_ORG_ID,
    // Prometheus text on loopback (METRICS_HOST), so a newcomer sees metrics with nothing set.
    METRICS_PORT: env.METRICS_PORT ?? String(LOCAL_METRICS_PORTS.api),
    WORKER_METRICS_PORT: env.WORKER_METRICS_PORT ?? String(LOCAL_METRICS_PORTS.worker),
    TEMPORAL_METRICS_PORT: env.TEMPORAL_METRICS_PORT ?? String(LOCAL_METRICS_PORTS.temporalSdk),
  };
}
