import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Config } from '../../lib/runtime/config';

/**
 * Signing secrets at rest (spec §2.6, §8): AES-256-GCM under a keyring, bound to the endpoint id as
 * associated data so a ciphertext copied onto another endpoint does not open. A sealed value names
 * the key it was sealed under (`v2:<key id>:…`), so the key can rotate: the first key of
 * WEBHOOK_SECRET_KEYS seals, every key listed opens (docs/decisions/0138-webhook-secret-keyring.md).
 * Secrets are never logged; callers hand them straight to the HMAC or the one API response.
 */
export interface SecretBox {
  seal(endpointId: string, secret: string): string;
  open(endpointId: string, sealed: string): string;
  /** The key id new values are sealed under; a value under another key wants resealing. */
  readonly currentKeyId: string;
  sealedUnder(sealed: string): string | null;
}

interface RingKey {
  id: string;
  key: Buffer;
}

/**
 * The keyring: WEBHOOK_SECRET_KEYS (`id:base64,id:base64`, current first), plus WEBHOOK_SECRET_KEY
 * (one key, id `default`) as before rotation existed. Production requires one of them (lib/runtime/config);
 * dev/test derive a fixed one.
 */
export function secretBoxFrom(
  config: Pick<Config, 'WEBHOOK_SECRET_KEY' | 'WEBHOOK_SECRET_KEYS' | 'NODE_ENV'>,
): SecretBox {
  const ring: RingKey[] = [...(config.WEBHOOK_SECRET_KEYS ?? [])];
  if (config.WEBHOOK_SECRET_KEY && !ring.some((k) => k.id === LEGACY_ID))
    ring.push({ id: LEGACY_ID, key: Buffer.from(config.WEBHOOK_SECRET_KEY, 'base64') });
  if (ring.length === 0) ring.push({ id: 'dev', key: devKey(config.NODE_ENV) });
  const current = ring[0]!;
  const byId = new Map(ring.map((k) => [k.id, k.key]));

  return {
    currentKeyId: current.id,
    seal(endpointId, secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv);
      cipher.setAAD(Buffer.from(endpointId));
      const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return [
        'v2',
        current.id,
        iv.toString('base64'),
        cipher.getAuthTag().toString('base64'),
        ct.toString('base64'),
      ].join(':');
    },
    open(endpointId, sealed) {
      const parts = sealed.split(':');
      if (parts[0] === 'v2' && parts.length === 5) {
        const key = byId.get(parts[1]!);
        if (!key) throw new Error(`sealed under key "${parts[1]}", which is not in WEBHOOK_SECRET_KEYS`);
        return decrypt(key, endpointId, parts.slice(2));
      }
      // v1 values (before the keyring) name no key: the legacy key, else whichever key's tag verifies.
      if (parts[0] === 'v1' && parts.length === 4) {
        const legacy = byId.get(LEGACY_ID);
        for (const key of legacy ? [legacy] : ring.map((k) => k.key)) {
          try {
            return decrypt(key, endpointId, parts.slice(1));
          } catch {
            // the wrong key: the tag does not verify; try the next
          }
        }
        throw new Error('a v1 sealed secret that no key in the ring opens');
      }
      throw new Error('unrecognised sealed secret');
    },
    sealedUnder(sealed) {
      const parts = sealed.split(':');
      return parts[0] === 'v2' ? parts[1]! : null;
    },
  };
}

const LEGACY_ID = 'default';

function decrypt(key: Buffer, endpointId: string, [iv, tag, ct]: string[]): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv!, 'base64'));
  decipher.setAAD(Buffer.from(endpointId));
  decipher.setAuthTag(Buffer.from(tag!, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(ct!, 'base64')), decipher.final()]).toString('utf8');
}

function devKey(env: Config['NODE_ENV']): Buffer {
  if (env === 'production') throw new Error('WEBHOOK_SECRET_KEYS (or WEBHOOK_SECRET_KEY) is required in production');
  return createHash('sha256').update('tranche development webhook secret key - not for production').digest();
}

/**
 * A new signing secret: 32 bytes from the CSPRNG as `whsec_` + standard base64, the form the
 * Standard Webhooks libraries decode their key from (docs/integrators/webhooks/README.md).
 */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The same box, keeping what it opened (bounded): the delivery path opens an endpoint's secret for
 * every attempt, and AES-GCM per delivery was a measurable share of the worker's CPU. A rotated
 * secret is a new sealed value, hence a new entry; the old one ages out with the bound.
 */
export function openingCache(box: SecretBox, limit = 10_000): SecretBox {
  const opened = new Map<string, string>();
  return {
    ...box,
    currentKeyId: box.currentKeyId,
    open(endpointId, sealed) {
      const key = `${endpointId}\n${sealed}`;
      let secret = opened.get(key);
      if (secret === undefined) {
        secret = box.open(endpointId, sealed);
        if (opened.size >= limit) opened.clear();
        opened.set(key, secret);
      }
      return secret;
    },
  };
}
