import { createHmac, timingSafeEqual } from 'node:crypto';
import { unauthenticated, unavailable } from '../lib/errors';

/** How far a notification's timestamp may be from our clock; older ones are treated as replays. */
const PROVIDER_TOLERANCE_SECONDS = 300;

/**
 * The provider signs `<X-Provider-Timestamp>.<raw body>` with HMAC-SHA256 and sends
 * `X-Provider-Signature: sha256=<hex>`. Binding the timestamp stops a captured notification being replayed later.
 */
export function providerSignature(secret: string, timestamp: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')}`;
}

export function verifyProviderSignature(
  secret: string | undefined,
  headers: { timestamp: string; signature: string },
  rawBody: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): void {
  if (!secret)
    throw unavailable('Verification provider notifications are not configured (IDENTITY_PROVIDER_WEBHOOK_SECRET)');
  if (!/^\d{1,12}$/.test(headers.timestamp) || !headers.signature) {
    throw unauthenticated('Send X-Provider-Timestamp and X-Provider-Signature', 'PROVIDER_SIGNATURE_MISSING');
  }
  if (Math.abs(nowSeconds - Number(headers.timestamp)) > PROVIDER_TOLERANCE_SECONDS) {
    throw unauthenticated('The notification timestamp is too far from the current time', 'PROVIDER_SIGNATURE_EXPIRED');
  }
  const expected = Buffer.from(providerSignature(secret, headers.timestamp, rawBody));
  const given = Buffer.from(headers.signature);
  // Compared in constant time; the length check only reveals the (public) length of the format.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw unauthenticated('The notification signature does not match', 'PROVIDER_SIGNATURE_INVALID');
  }
}
