// Verifying Tranche webhooks in TypeScript with Node's standard library only (node:crypto).
// Both schemes are keyed from the one signing_secret ("whsec_<base64>"); see ../README.md.
import { createHmac, timingSafeEqual } from 'node:crypto';

const equal = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Spec §6.4: X-Service-Signature is "sha256=" + hex HMAC-SHA256 of the raw body, keyed with the secret string as is. */
export function verifyServiceSignature(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (!header) return false;
  const expected = 'sha256=' + createHmac('sha256', secret).update(rawBody).digest('hex');
  return equal(expected, header);
}

export type StandardVerdict = 'ok' | 'bad_signature' | 'stale';

/**
 * Standard Webhooks: webhook-signature holds one or more "v1,<base64>" entries (two during a
 * secret rotation), each an HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<raw body>" keyed
 * with the base64-decoded part of the secret after "whsec_". A timestamp further than the
 * tolerance from now is refused, so a captured request cannot be replayed later.
 */
export function verifyStandardWebhook(
  secret: string,
  rawBody: Buffer,
  headers: { id?: string; timestamp?: string; signature?: string },
  nowSeconds = Math.floor(Date.now() / 1000),
  toleranceSeconds = 300,
): StandardVerdict {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature || !/^\d+$/.test(timestamp)) return 'bad_signature';
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest('base64');
  const matches = signature.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    return version === 'v1' && value !== undefined && equal(value, expected);
  });
  if (!matches) return 'bad_signature';
  return Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds ? 'stale' : 'ok';
}
