import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The payload keyring of a local stack (`npm start`'s .data/, `npm run cluster`'s folder): made once,
 * readable by its owner only, and kept with the histories it opens, so a restart reads them again.
 * Returns the file's path, for TEMPORAL_PAYLOAD_KEYS_FILE.
 */
export function payloadKeyFile(dataDir: string): string {
  const file = join(dataDir, 'temporal-payload-keys');
  if (!existsSync(file)) writeFileSync(file, `${newPayloadKey()}\n`, { mode: 0o600 });
  return file;
}

/** A new keyring entry, `<key id>:<base64 of 32 bytes>`, named after the day it was made. */
export function newPayloadKey(): string {
  return `k${new Date().toISOString().slice(0, 10).replace(/-/g, '')}:${randomBytes(32).toString('base64')}`;
}
