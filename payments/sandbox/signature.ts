import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../lib/runtime/config';

/**
 * The sandbox signs like real processors do: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`.
 * The timestamp inside the MAC bounds replays to the tolerance window.
 */
export const SANDBOX_SIGNATURE_HEADER = 'Sandbox-Signature';
const TOLERANCE_SECONDS = 300;

// Development and tests only; loadConfig refuses the sandbox in production without a real secret,
// and this refuses again rather than verify "paid" with a public constant (docs/decisions/0259).
const DEVELOPMENT_SECRET = 'tranche-sandbox-development-notification-secret';

export function sandboxSecret(config: Pick<Config, 'SANDBOX_NOTIFICATION_SECRET' | 'NODE_ENV'>): string {
  if (config.SANDBOX_NOTIFICATION_SECRET) return config.SANDBOX_NOTIFICATION_SECRET;
  if (config.NODE_ENV === 'production') throw new Error('SANDBOX_NOTIFICATION_SECRET is required in production');
  return DEVELOPMENT_SECRET;
}

const mac = (secret: string, t: number, body: string) =>
  createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

export function signSandboxBody(secret: string, body: string, nowMs = Date.now()): string {
  const t = Math.floor(nowMs / 1000);
  return `t=${t},v1=${mac(secret, t, body)}`;
}

export function verifySandboxSignature(secret: string, body: string, header: string, nowMs = Date.now()): boolean {
  const parts = new Map(header.split(',').map((p) => p.trim().split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const given = parts.get('v1') ?? '';
  if (!Number.isInteger(t) || Math.abs(nowMs / 1000 - t) > TOLERANCE_SECONDS || !/^[0-9a-f]{64}$/.test(given))
    return false;
  return timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(mac(secret, t, body), 'hex'));
}
