import { randomBytes } from 'node:crypto';

/** A key for WEBHOOK_SECRET_KEYS: 32 random bytes, base64 (docs/decisions/0138-webhook-secret-keyring.md). */
export const sealingKey = () => randomBytes(32).toString('base64');
