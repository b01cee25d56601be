import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Config } from '../lib/config';

/**
 * Signing secrets at rest (spec §2.6, §8): AES-256-GCM under WEBHOOK_SECRET_KEY, bound to the
 * endpoint id as associated data so a ciphertext copied onto another endpoint does not open.
 * Secrets are never logged; callers hand them straight to the HMAC or the one API response.
 */
export interface SecretBox {
  seal(endpointId: string, secret: string): string;
  open(endpointId: string, sealed: string): string;
}

const VERSION = 'v1';

/** Production requires the key (lib/config refuses to start without it); dev/test derive a fixed one. */
export function secretBoxFrom(config: Pick<Config, 'WEBHOOK_SECRET_KEY' | 'NODE_ENV'>): SecretBox {
  const key = config.WEBHOOK_SECRET_KEY
    ? Buffer.from(config.WEBHOOK_SECRET_KEY, 'base64')
    : devKey(config.NODE_ENV);
  return {
    seal(endpointId, secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(endpointId));
      const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), ct.toString('base64')].join(':');
    },
    open(endpointId, sealed) {
      const [version, iv, tag, ct] = sealed.split(':');
      if (version !== VERSION || !iv || !tag || !ct) throw new Error('unrecognised sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      decipher.setAAD(Buffer.from(endpointId));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}

function devKey(env: Config['NODE_ENV']): Buffer {
  if (env === 'production') throw new Error('WEBHOOK_SECRET_KEY is required in production');
  return createHash('sha256').update('tranche development webhook secret key - not for production').digest();
}

/**
 * A new signing secret: 32 bytes from the CSPRNG as `whsec_` + standard base64, the form the
 * Standard Webhooks libraries decode their key from (docs/consumers/README.md).
 */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
