import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const run = promisify(execFile);
export const root = join(__dirname, '..', '..', '..');

/** A version scripts/tools.sh pins (`NAME=version`). */
export const toolVersion = (name: string) =>
  new RegExp(`^${name}=(\\S+)`, 'm').exec(readFileSync(join(root, 'scripts', 'tools.sh'), 'utf8'))![1];

/** The variables temporal-compose.yml requires: compose refuses to parse it without any of them. */
export const COMPOSE_SECRETS = {
  TRANCHE_DB_PASSWORD: 'p',
  TRANCHE_APP_DB_PASSWORD: 'a',
  AUDIT_HMAC_KEYS: 'h',
  PERSONAL_DATA_KEYS: 'pd',
  TEMPORAL_DB_PASSWORD: 'p',
  ACCESS_TOKEN_PRIVATE_KEY: 'k',
  WEBHOOK_SECRET_KEYS: 'w',
  TEMPORAL_PAYLOAD_KEYS: 't',
  PAYMENT_PROCESSOR: 'stripe',
};

/** temporal-compose.yml as `docker compose config` resolves it, with the secrets and `extra` in its environment. */
export async function composeConfig(extra: Record<string, string> = {}): Promise<any> {
  const { stdout } = await run('docker', ['compose', '-f', 'temporal-compose.yml', 'config', '--format', 'json'], {
    cwd: root,
    env: { ...process.env, ...COMPOSE_SECRETS, ...extra },
    timeout: 30_000,
  });
  return JSON.parse(stdout);
}
