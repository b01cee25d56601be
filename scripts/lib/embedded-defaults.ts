import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What `npm start` adds to the environment for its embedded, single-machine stack, so a newcomer
 * can go from nothing to a completed subscription with no variables of their own. Every value
 * here is for local development only; a variable already set wins.
 */

/**
 * The verification provider's notification secret on the embedded stack. Public on purpose
 * (docs/integrators/walkthrough.md): it lets you act as the KYC provider by hand.
 */
export const DEV_PROVIDER_SECRET = 'tranche-dev-provider-secret-not-for-production';

/**
 * The audit trail's key on the embedded stack and in the tests (docs/decisions/0266): public on
 * purpose, like the secret above, so `npm run -s audit:verify` beside `npm start` finds it
 * (auditKeysBesideNpmStart). Production sets AUDIT_HMAC_KEYS (lib/runtime/config.ts refuses to start without).
 */
export const DEV_AUDIT_HMAC_KEYS = 'dev:Bm4oZF0dhQ48S5xRxjZmDtnvZ3p3UPKOzNEWsn+5LDQ=';

/**
 * The key investors' data keys are wrapped under on the embedded stack and in the tests
 * (docs/decisions/0313-erasure-by-crypto-shredding.md): public on purpose, like the audit key above; it protects
 * nothing on a development machine. Production sets PERSONAL_DATA_KEYS (lib/runtime/config.ts refuses to start without).
 */
export const DEV_PERSONAL_DATA_KEYS = 'dev:gX6Y+cygeL8hj/yblvOOHvkx9FBHqTDp+qDozzuo8Dg=';

/**
 * A command run beside `npm start` (audit:verify) with no AUDIT_HMAC_KEYS of its own and outside
 * production: npm start's development key, with a note on stderr saying so.
 */
export function auditKeysBesideNpmStart(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.NODE_ENV === 'production') return env;
  const found: NodeJS.ProcessEnv = {};
  if (!env.AUDIT_HMAC_KEYS) {
    process.stderr.write(
      "note: AUDIT_HMAC_KEYS is not set: using npm start's development key (scripts/lib/embedded-defaults.ts)\n",
    );
    found.AUDIT_HMAC_KEYS = DEV_AUDIT_HMAC_KEYS;
  }
  // The checkpoints' memo is sealed (lib/runtime/payload-codec.ts): npm start keeps its key in its data folder.
  const keyFile = join(env.TRANCHE_DATA_DIR ?? join(__dirname, '..', '..', '.data'), 'temporal-payload-keys');
  if (!env.TEMPORAL_PAYLOAD_KEYS && !env.TEMPORAL_PAYLOAD_KEYS_FILE && existsSync(keyFile))
    found.TEMPORAL_PAYLOAD_KEYS_FILE = keyFile;
  return { ...env, ...found };
}
/** The organisation the first-token command uses (docs/integrators/tokens.md; scripts/mint-token.ts's default). */
const DEV_ORG_ID = '00000000-0000-4000-8000-000000000001';

/** The local /metrics ports `npm start` serves: the API's, the worker's own, the worker's Temporal SDK's. */
const LOCAL_METRICS_PORTS = { api: 9464, worker: 9465, temporalSdk: 9466 } as const;

export function embeddedDefaults(env: NodeJS.ProcessEnv): Record<string, string> {
  return {
    // Unset is production (lib/runtime/config.ts): npm start is the development opt-in, for this machine only
    // (docs/decisions/0259-production-by-default.md).
    NODE_ENV: env.NODE_ENV ?? 'development',
    // The development identity provider mints tokens for anyone: on only here, where it is the point.
    DEV_IDP_ENABLED: env.DEV_IDP_ENABLED ?? 'true',
    IDENTITY_PROVIDER_WEBHOOK_SECRET: env.IDENTITY_PROVIDER_WEBHOOK_SECRET ?? DEV_PROVIDER_SECRET,
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: env.WEBHOOK_ALLOW_INSECURE_LOOPBACK ?? 'true',
    AUDIT_HMAC_KEYS: env.AUDIT_HMAC_KEYS ?? DEV_AUDIT_HMAC_KEYS,
    PERSONAL_DATA_KEYS: env.PERSONAL_DATA_KEYS ?? DEV_PERSONAL_DATA_KEYS,
    // The first-token organisation's admins read sealed histories in the Web UI through the codec server.
    CODEC_SERVER_ORG_IDS: env.CODEC_SERVER_ORG_IDS ?? DEV_ORG_ID,
    // Prometheus text on loopback (METRICS_HOST), so a newcomer sees metrics with nothing set.
    METRICS_PORT: env.METRICS_PORT ?? String(LOCAL_METRICS_PORTS.api),
    WORKER_METRICS_PORT: env.WORKER_METRICS_PORT ?? String(LOCAL_METRICS_PORTS.worker),
    TEMPORAL_METRICS_PORT: env.TEMPORAL_METRICS_PORT ?? String(LOCAL_METRICS_PORTS.temporalSdk),
  };
}
