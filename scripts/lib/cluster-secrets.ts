import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newPayloadKey } from './payload-key-file';

const ecKey = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
/** A keyring of one key, named by a letter and today's date: `k20261127:<base64 of 32 bytes>`. */
const keyring = (letter: string) =>
  `${letter}${new Date().toISOString().slice(0, 10).replace(/-/g, '')}:${randomBytes(32).toString('base64')}`;

/**
 * Every secret production requires, made once per cluster folder. A secret added to the service
 * later is added to an older folder's file the first time it starts, and kept from then on (a
 * folder from before payloads were sealed keeps its older histories readable, in clear).
 */
const SECRETS: Record<string, () => string> = {
  ACCESS_TOKEN_PRIVATE_KEY: ecKey,
  // The next key of a rotation, published ahead (docs/decisions/0137-access-token-key-rotation.md).
  ACCESS_TOKEN_PUBLISHED_KEYS: ecKey,
  WEBHOOK_SECRET_KEYS: () => keyring('k'),
  SANDBOX_NOTIFICATION_SECRET: () => randomBytes(32).toString('hex'),
  TEMPORAL_PAYLOAD_KEYS: newPayloadKey,
  AUDIT_HMAC_KEYS: () => keyring('a'),
  // Investors' data keys are wrapped under it (docs/decisions/0313-erasure-by-crypto-shredding.md).
  PERSONAL_DATA_KEYS: () => keyring('p'),
};

/** The cluster's secrets, from `<dataDir>/secrets.json` (mode 600), made or completed first when needed. */
export function clusterSecrets(dataDir: string): Record<string, string> {
  const file = join(dataDir, 'secrets.json');
  const secrets = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : {};
  const missing = Object.keys(SECRETS).filter((name) => !secrets[name]);
  for (const name of missing) secrets[name] = SECRETS[name]!();
  if (missing.length) writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}
