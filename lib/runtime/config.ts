import type { z } from 'zod';
import { ConfigSchema, type Config } from './config-schema';
import { sweepGraceSeconds } from './hold-windows';

export { ConfigSchema, type Config };

export class ConfigError extends Error {}

type Parsed = z.infer<typeof ConfigSchema>;
const production = (c: Parsed) => c.NODE_ENV === 'production';

/**
 * Settings for a soak or a test only: each shortens a window production must keep (documented as
 * "never production" above), so production refuses them rather than trusting they were left unset.
 */
const TEST_ONLY_SETTINGS = [
  ['IDEMPOTENCY_KEY_TTL_SECONDS', 'IDEMPOTENCY_KEY_TTL_HOURS'],
  ['RETENTION_EVENTS_SECONDS', 'RETENTION_EVENTS_DAYS'],
  ['RETENTION_PAYMENT_NOTIFICATIONS_SECONDS', 'RETENTION_PAYMENT_NOTIFICATIONS_DAYS'],
  ['RETENTION_PRUNE_INTERVAL_SECONDS', 'RETENTION_PRUNE_INTERVAL_MINUTES'],
  ['SUBSCRIPTION_DRAFT_TTL_SECONDS', 'SUBSCRIPTION_DRAFT_TTL_DAYS'],
  ['COMMITMENT_SWEEP_INTERVAL_SECONDS', 'COMMITMENT_SWEEP_INTERVAL_MINUTES'],
  ['COMMITMENT_SWEEP_GRACE_SECONDS', 'COMMITMENT_SWEEP_GRACE_MINUTES'],
] as const satisfies readonly (readonly [keyof Parsed, keyof Parsed])[];

/**
 * Rules across variables; every broken one is reported at once. A production secret's message says
 * how to make one, as an operator starting the image for the first time reads it.
 */
const CROSS_FIELD_RULES: { variable: string; message: string; broken: (c: Parsed) => boolean }[] = [
  {
    variable: 'WEBHOOK_SECRET_KEYS',
    message:
      'required in production (or WEBHOOK_SECRET_KEY): the key webhook signing secrets and stored answers are sealed under. ' +
      'Make one: WEBHOOK_SECRET_KEYS="k1:$(openssl rand -base64 32)"',
    broken: (c) => production(c) && !c.WEBHOOK_SECRET_KEY && !c.WEBHOOK_SECRET_KEYS,
  },
  {
    variable: 'TEMPORAL_PAYLOAD_KEYS',
    message:
      'required in production (or TEMPORAL_PAYLOAD_KEYS_FILE), so workflow histories are encrypted: `k1:$(openssl rand -base64 32)`',
    broken: (c) => production(c) && !c.TEMPORAL_PAYLOAD_KEYS && !c.TEMPORAL_PAYLOAD_KEYS_FILE,
  },
  {
    variable: 'TEMPORAL_ACCEPT_UNSEALED_PAYLOADS',
    message:
      "never in production: a payload without the codec's seal comes from someone without the payload keys " +
      '(docs/decisions/0379-unsealed-payloads-refused.md)',
    broken: (c) => production(c) && c.TEMPORAL_ACCEPT_UNSEALED_PAYLOADS,
  },
  {
    variable: 'PERSONAL_DATA_KEYS',
    message:
      "required in production, so investors' personal data is sealed under keys the database does not hold and can be erased. " +
      'Make one: PERSONAL_DATA_KEYS="p1:$(openssl rand -base64 32)"',
    broken: (c) => production(c) && !c.PERSONAL_DATA_KEYS,
  },
  {
    variable: 'ACCESS_TOKEN_PRIVATE_KEY',
    message:
      'required in production, so every API instance signs access tokens with one key of yours. ' +
      'Make one: ACCESS_TOKEN_PRIVATE_KEY="$(openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256)"',
    broken: (c) => production(c) && !c.ACCESS_TOKEN_PRIVATE_KEY,
  },
  {
    variable: 'PAYMENT_PROCESSOR',
    message:
      'the sandbox processor (the default) moves no money and is refused in production: set PAYMENT_PROCESSOR=stripe ' +
      'with STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET, or PAYMENTS_SANDBOX_IN_PRODUCTION=true to run the sandbox knowingly (a demo)',
    broken: (c) => production(c) && c.PAYMENT_PROCESSOR === 'sandbox' && !c.PAYMENTS_SANDBOX_IN_PRODUCTION,
  },
  {
    variable: 'STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET',
    message: 'required when PAYMENT_PROCESSOR is stripe',
    broken: (c) => c.PAYMENT_PROCESSOR === 'stripe' && (!c.STRIPE_SECRET_KEY || !c.STRIPE_WEBHOOK_SECRET),
  },
  {
    variable: 'SANDBOX_NOTIFICATION_SECRET',
    message:
      'required in production when the sandbox processor runs (else its notifications are signed with a public constant). ' +
      'Make one: SANDBOX_NOTIFICATION_SECRET="$(openssl rand -hex 32)"',
    broken: (c) =>
      production(c) &&
      c.PAYMENT_PROCESSOR === 'sandbox' &&
      c.PAYMENTS_SANDBOX_IN_PRODUCTION &&
      !c.SANDBOX_NOTIFICATION_SECRET,
  },
  {
    variable: 'PAYMENTS_SANDBOX_IN_PRODUCTION',
    message: 'only with PAYMENT_PROCESSOR=sandbox in production',
    broken: (c) => c.PAYMENTS_SANDBOX_IN_PRODUCTION && (!production(c) || c.PAYMENT_PROCESSOR !== 'sandbox'),
  },
  {
    variable: 'CONSOLE_OIDC_ISSUER',
    message:
      'must be one of OIDC_ISSUERS and pinned to organisations with org_ids: the console has no API key to name the organisation',
    broken: (c) =>
      c.CONSOLE_OIDC_ISSUER !== undefined &&
      !c.OIDC_ISSUERS.some((i) => i.issuer === c.CONSOLE_OIDC_ISSUER && i.org_ids),
  },
  {
    variable: 'TEMPORAL_TLS_CERT_PATH, TEMPORAL_TLS_KEY_PATH',
    message: 'a client certificate needs its key, and a key its certificate',
    broken: (c) => Boolean(c.TEMPORAL_TLS_CERT_PATH) !== Boolean(c.TEMPORAL_TLS_KEY_PATH),
  },
  {
    variable: 'AUDIT_HMAC_KEYS',
    message:
      'required in production, so audit entries are keyed with a key the database does not hold: `<key id>:<base64 of 32 bytes>`, e.g. `a1:$(openssl rand -base64 32)`',
    broken: (c) => production(c) && !c.AUDIT_HMAC_KEYS,
  },
  {
    variable: 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
    message: 'at most WORKER_MAX_CACHED_WORKFLOWS: a workflow task runs on a cached workflow (or set the cache to 0)',
    broken: (c) =>
      c.WORKER_MAX_CACHED_WORKFLOWS > 0 && c.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS > c.WORKER_MAX_CACHED_WORKFLOWS,
  },
  {
    variable: 'API_REQUEST_TIMING',
    message:
      'tells every caller how long each check took (a Server-Timing header): for the benchmark, never in production',
    broken: (c) => production(c) && c.API_REQUEST_TIMING,
  },
  {
    variable: 'DEV_IDP_ENABLED',
    message: 'the development identity provider cannot run in production',
    broken: (c) => production(c) && c.DEV_IDP_ENABLED === true,
  },
  {
    variable: 'COMMITMENT_SWEEP_GRACE_MINUTES',
    message:
      "must be longer than COMMAND_TIMEOUT_MS: a create's workflow start may be on its way that long, and its commitment is not the sweep's until it is not",
    broken: (c) => sweepGraceSeconds(c) * 1000 <= c.COMMAND_TIMEOUT_MS,
  },
  {
    variable: 'TEST_PAUSE_AT',
    message: 'a pause point for the fault tests: only with NODE_ENV=test, never in development or production',
    broken: (c) => c.TEST_PAUSE_AT !== undefined && c.NODE_ENV !== 'test',
  },
  ...TEST_ONLY_SETTINGS.map(([name, instead]) => ({
    variable: name,
    message: `for a soak or a test, never in production: unset it (${instead} sets the window)`,
    broken: (c: Parsed) => production(c) && c[name] !== undefined,
  })),
];

/** Said after a refused production start: how a machine of one's own opts out. */
const DEVELOPMENT_HINT =
  'NODE_ENV is unset or production, so every production rule applies; on your own machine, NODE_ENV=development ' +
  'turns on the development conveniences (npm start sets it)';

/** Parses the environment; throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = ConfigSchema.safeParse(env);
  const invalid = parsed.success ? [] : parsed.error.issues;
  const lines = invalid.map((i) => `  ${i.path.join('.')}: ${i.message}`);
  // The cross-variable rules run even when a variable is invalid, on the rest of the environment
  // (DATABASE_URL stood in for when it is the one missing): one start names everything to fix.
  const rest = parsed.success ? parsed : leniently(env, new Set(invalid.map((i) => String(i.path[0]))));
  const checked = rest.success ? rest.data : null;
  const broken = checked ? CROSS_FIELD_RULES.filter((r) => r.broken(checked)) : [];
  lines.push(...broken.map((r) => `  ${r.variable}: ${r.message}`));
  if (lines.length) {
    const hint = checked && production(checked) && broken.length ? `\n  (${DEVELOPMENT_HINT})` : '';
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}${hint}`);
  }
  if (!parsed.success) throw new ConfigError('invalid configuration');
  return Object.freeze({
    ...parsed.data,
    PUBLIC_BASE_URL: parsed.data.PUBLIC_BASE_URL ?? `http://localhost:${parsed.data.PORT}`,
  });
}

const TemporalSchema = ConfigSchema.pick({
  TEMPORAL_ADDRESS: true,
  TEMPORAL_NAMESPACE: true,
  TEMPORAL_TLS: true,
  TEMPORAL_TLS_CERT_PATH: true,
  TEMPORAL_TLS_KEY_PATH: true,
  TEMPORAL_TLS_CA_PATH: true,
  TEMPORAL_TLS_SERVER_NAME: true,
  TEMPORAL_API_KEY: true,
  STARTUP_WAIT_SECONDS: true,
});

const AuditToolSchema = TemporalSchema.extend(
  ConfigSchema.pick({
    DATABASE_URL: true,
    DATABASE_POOL_MAX: true,
    TEMPORAL_TASK_QUEUE: true,
    TEMPORAL_PAYLOAD_KEYS: true,
    TEMPORAL_PAYLOAD_KEYS_FILE: true,
    TEMPORAL_ACCEPT_UNSEALED_PAYLOADS: true,
    AUDIT_HMAC_KEYS: true,
    AUDIT_CHECKPOINT_INTERVAL_SECONDS: true,
  }).shape,
);
export type AuditToolConfig = z.infer<typeof AuditToolSchema>;

/**
 * What `npm run audit:verify` reads, alone: the database, Temporal (where the checkpoints are, sealed
 * under the payload keys) and the audit keys, the same schema. It reads and never serves, so no other setting is asked for.
 */
export function loadAuditToolConfig(env: NodeJS.ProcessEnv = process.env): AuditToolConfig {
  return settingsOf(AuditToolSchema, env);
}

/** `env` read against one part of the schema: every refusal named, in one ConfigError. */
function settingsOf<S extends z.ZodType>(part: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const parsed = part.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/** Temporal's variables alone, for the tools that need no database (temporal:setup). */
export function loadTemporalConfig(env: NodeJS.ProcessEnv = process.env): z.infer<typeof TemporalSchema> {
  return settingsOf(TemporalSchema, env);
}

const WorkerVersionSchema = TemporalSchema.extend(
  ConfigSchema.pick({ TRANCHE_BUILD_ID: true, WORKER_DEPLOYMENT_NAME: true }).shape,
);

/** Temporal's variables and the Worker Deployment's name and build, for `npm run worker-version`. */
export function loadWorkerVersionConfig(env: NodeJS.ProcessEnv = process.env): z.infer<typeof WorkerVersionSchema> {
  return settingsOf(WorkerVersionSchema, env);
}

function leniently(env: NodeJS.ProcessEnv, invalid: Set<string>) {
  const rest = Object.fromEntries(Object.entries(env).filter(([name]) => !invalid.has(name)));
  return ConfigSchema.safeParse({ DATABASE_URL: 'postgres://stand-in/for-the-rules', ...rest });
}

const DatabaseSchema = ConfigSchema.pick({ DATABASE_URL: true, DATABASE_POOL_MAX: true });

/**
 * The database's variables alone, for the command-line tools that reach nothing else (api-key,
 * audit:verify): the service's secrets are not theirs to need, so they run as docs/integrators/tokens.md writes
 * them, against npm start's database or a production one, with no NODE_ENV.
 */
export function loadDatabaseConfig(env: NodeJS.ProcessEnv = process.env): z.infer<typeof DatabaseSchema> {
  return settingsOf(DatabaseSchema, env);
}

const TracingSchema = ConfigSchema.pick({
  OTEL_SDK_DISABLED: true,
  OTEL_TRACES_EXPORTER: true,
  OTEL_EXPORTER_OTLP_ENDPOINT: true,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: true,
  OTEL_EXPORTER_ZIPKIN_ENDPOINT: true,
  OTEL_SERVICE_NAME: true,
  TRACE_TRUSTED_CALLERS: true,
});
export type TracingConfig = z.infer<typeof TracingSchema>;

/**
 * The traces' variables alone: tracing starts before the rest of the process loads (its
 * instrumentations must patch `pg` and `http` first), so before loadConfig runs. The same schema.
 */
export function loadTracingConfig(env: NodeJS.ProcessEnv = process.env): TracingConfig {
  const tracing = settingsOf(TracingSchema, env);
  // A Zipkin endpoint alone selects no exporter (the spec's default would be OTLP): say so rather
  // than start without the traces it was meant for.
  if (tracing.OTEL_EXPORTER_ZIPKIN_ENDPOINT && !tracing.OTEL_TRACES_EXPORTER)
    throw new ConfigError(
      'invalid configuration:\n  OTEL_EXPORTER_ZIPKIN_ENDPOINT: set OTEL_TRACES_EXPORTER=zipkin with it (alone it selects no exporter)',
    );
  return tracing;
}
