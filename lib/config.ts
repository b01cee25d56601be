import { z } from 'zod';

/** The behaviour set a deployment runs (spec: Set A or Set B); see domain/behaviour-set.ts. */
export const BehaviourSet = z.enum(['A', 'B']);
export type BehaviourSet = z.infer<typeof BehaviourSet>;

const bool = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1');

/** Every setting the service reads from its environment, in one place. */
export const ConfigSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BEHAVIOUR_SET: BehaviourSet.default('A'),

  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Address investors and processors reach this API at; used to build session and callback URLs. */
  PUBLIC_BASE_URL: z.url().optional(),

  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),

  TEMPORAL_ADDRESS: z.string().min(1).default('localhost:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('tranche'),

  /** PKCS#8 PEM of the ES256 key that signs access tokens. Unset: a fresh key per process (dev/test only). */
  ACCESS_TOKEN_PRIVATE_KEY: z.string().includes('PRIVATE KEY').optional(),
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),

  /** Plain-http webhook URLs to loopback are allowed only when this is on (local development). */
  WEBHOOK_ALLOW_INSECURE_LOOPBACK: bool.default(false),
});

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {}

/** Parses the environment; throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  if (parsed.data.NODE_ENV === 'production' && !parsed.data.ACCESS_TOKEN_PRIVATE_KEY) {
    throw new ConfigError('invalid configuration:\n  ACCESS_TOKEN_PRIVATE_KEY: required in production, so every API instance signs with one key');
  }
  return Object.freeze({
    ...parsed.data,
    PUBLIC_BASE_URL: parsed.data.PUBLIC_BASE_URL ?? `http://localhost:${parsed.data.PORT}`,
  });
}
