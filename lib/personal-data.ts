import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { ERASED, SEALED_PREFIX as PREFIX, UNREADABLE } from './personal-markers';

/**
 * Personal data sealed under its investor's own key, so destroying that key erases it everywhere
 * the sealed value was copied: the projection, stored events and delivery bodies, attempts'
 * response excerpts, workflow histories, audit entries
 * (docs/decisions/0313-erasure-by-crypto-shredding.md).
 *
 * A sealed value is one string, `pii:v1:<data key id>:<base64url of iv, tag, ciphertext>`: it
 * travels in JSON as any string does and names the key that opens it. AES-256-GCM, the key id as
 * associated data, so a value cannot be moved under another key. Pure: no I/O (db/personal-keys.ts
 * keeps the keys).
 */

export { ERASED };
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** Every sealed value inside a text (a JSON document, a body). */
const SEALED = new RegExp(`${PREFIX}(${UUID}):([A-Za-z0-9_-]+)`, 'g');
const WHOLE = new RegExp(`^${PREFIX}(${UUID}):([A-Za-z0-9_-]+)$`);

/** One investor's data key, unwrapped: its row's id and its 32 bytes. */
export interface DataKey {
  id: string;
  key: Buffer;
}

/** One key of PERSONAL_DATA_KEYS (lib/runtime/config.ts), which wraps the data keys. */
export interface WrappingKey {
  id: string;
  key: Buffer;
}

export function sealWith(k: DataKey, clear: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', k.key, iv);
  cipher.setAAD(Buffer.from(k.id));
  const ct = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final()]);
  return `${PREFIX}${k.id}:${Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64url')}`;
}

/**
 * A request's text hashed under its investor's key (HMAC-SHA256 under a key derived from theirs):
 * equal texts give equal hashes, so a replayed request is recognised, but a stored hash cannot be
 * tried against guessed texts without the key, and an erasure makes it unguessable for good
 * (docs/decisions/0381-erasure-complete.md). `rh:v1:<data key id>:<hex>`.
 */
export function keyedHash(k: DataKey, text: string): string {
  const derived = createHmac('sha256', k.key).update('tranche request hash v1').digest();
  return `rh:v1:${k.id}:${createHmac('sha256', derived).update(text).digest('hex')}`;
}

/**
 * The data keys a read may use, by id: a key's bytes, or null for a key that exists but belongs to
 * another organisation than the one reading (docs/decisions/0381-erasure-complete.md). An id that is
 * absent names a destroyed key.
 */
export type OpenKeys = ReadonlyMap<string, Buffer | null>;

/**
 * The clear text; ERASED when its key is gone; UNREADABLE when its key is another organisation's
 * or the value does not open (tampered, or moved under another key id).
 */
function openWith(keys: OpenKeys, id: string, sealed: string): string {
  const key = keys.get(id);
  if (key === undefined) return ERASED;
  if (key === null) return UNREADABLE;
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(id));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return UNREADABLE;
  }
}

export const holdsSealed = (text: string): boolean => text.includes(PREFIX);

/** The data key ids a text's sealed values name. */
export function sealedKeyIds(text: string): string[] {
  return [...new Set([...text.matchAll(SEALED)].map((m) => m[1]!))];
}

/**
 * A JSON text with every sealed value opened in place (escaped as JSON string content), for a
 * body about to be sent or shown. Keys absent from `keys` were destroyed: their values read ERASED.
 */
export function openJsonText(text: string, keys: OpenKeys): string {
  return text.replace(SEALED, (_all, id: string, sealed: string) =>
    JSON.stringify(openWith(keys, id, sealed)).slice(1, -1),
  );
}

/** Every string of a JSON value visited: a sealed string is opened, a string holding sealed values is a JSON text. */
export function openValue(value: unknown, keys: OpenKeys): unknown {
  if (typeof value === 'string') {
    if (!holdsSealed(value)) return value;
    const whole = WHOLE.exec(value);
    return whole ? openWith(keys, whole[1]!, whole[2]!) : openJsonText(value, keys);
  }
  if (Array.isArray(value)) return value.map((v) => openValue(v, keys));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = openValue(v, keys);
    return out;
  }
  return value;
}

/** A data key wrapped for storage: `<wrapping key id>:<base64 of iv, tag, ciphertext>`, bound to its row's id. */
export function wrapKey(wrapping: WrappingKey, dataKey: DataKey): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', wrapping.key, iv);
  cipher.setAAD(Buffer.from(dataKey.id));
  const ct = Buffer.concat([cipher.update(dataKey.key), cipher.final()]);
  return `${wrapping.id}:${Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64')}`;
}

export function unwrapKey(ring: readonly WrappingKey[], id: string, wrapped: string): Buffer {
  const at = wrapped.indexOf(':');
  const wrapping = ring.find((k) => k.id === wrapped.slice(0, at));
  if (!wrapping)
    throw new Error(`personal data key "${wrapped.slice(0, at)}" is not in PERSONAL_DATA_KEYS: add it (keys are kept)`);
  const raw = Buffer.from(wrapped.slice(at + 1), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', wrapping.key, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(id));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
}

export const newDataKeyBytes = (): Buffer => randomBytes(32);
