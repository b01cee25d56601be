import { createHash, randomUUID } from 'node:crypto';

/** A random UUID v4 (for code outside workflows; workflows use `uuid4()` from the SDK). */
export const newId = (): string => randomUUID();

/**
 * A name-based UUID (v5 layout over SHA-1): the same inputs always give the same id, so a
 * retried step derives the id it derived the first time.
 */
export function uuidFromName(...parts: string[]): string {
  const hash = createHash('sha1').update(parts.join('\u0000')).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
