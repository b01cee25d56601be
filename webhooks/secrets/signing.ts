import { createHmac } from 'node:crypto';

/** The request every attempt of a delivery sends (spec §6.3, §6.4). */
export interface SignedRequest {
  headers: Record<string, string>;
  body: string;
}

export interface EnvelopeSource {
  id: string;
  type: string;
  source: string;
  org_id: string;
  occurred_at: Date | string;
  data: unknown;
}

/** spec §6.3 body, serialised once per event and stored; every attempt sends these exact bytes. */
export function renderEventBody(e: EnvelopeSource): string {
  return JSON.stringify({
    event_id: e.id,
    event_type: e.type,
    source: e.source,
    org_id: e.org_id,
    version: '1', // spec §9
    timestamp: new Date(e.occurred_at).toISOString(),
    data: e.data ?? {},
  });
}

/**
 * spec §6.4: `sha256=` + lowercase hex HMAC-SHA256 of the raw body bytes, keyed with the secret.
 * @internal exported for its tests
 */
export function signatureOf(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/**
 * The keys an attempt signs with: the endpoint's secret, and the one it replaced while the
 * rotation overlap lasts (Standard Webhooks header only; §6.4 uses the current secret alone).
 */
export interface SigningKeys {
  current: string;
  previous?: string | null;
}

/**
 * Standard Webhooks (standardwebhooks.com) keys its HMAC with the bytes the secret's base64 part
 * decodes to, where §6.4 keys with the secret string itself. Node's decoder takes base64 and
 * base64url alike, so secrets issued before the switch to standard base64 still work.
 */
function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

/** `v1,` + base64 HMAC-SHA256 over `id.timestamp.body`, once per key, space separated. */
function standardSignature(keys: SigningKeys, id: string, timestamp: number, body: string): string {
  const secrets = keys.previous ? [keys.current, keys.previous] : [keys.current];
  return secrets
    .map(
      (secret) =>
        `v1,${createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`,
    )
    .join(' ');
}

/**
 * spec §6.3 headers exactly, and beside them the Standard Webhooks three: `webhook-id` is the
 * delivery id (the same on every attempt, so consumers dedupe by it), `webhook-timestamp` the
 * sending time in unix seconds (signed, so consumers refuse stale replays).
 */
export function signedRequest(
  keys: SigningKeys | string,
  body: string,
  ids: { eventId: string; eventType: string; deliveryId: string; timestamp: string },
  sentAt: Date = new Date(),
): SignedRequest {
  const k = typeof keys === 'string' ? { current: keys } : keys;
  const unix = Math.floor(sentAt.getTime() / 1000);
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'X-Service-Signature': signatureOf(k.current, body),
      'X-Service-Event-Type': ids.eventType,
      'X-Service-Event-Id': ids.eventId,
      'X-Service-Delivery-Id': ids.deliveryId,
      'X-Service-Timestamp': ids.timestamp,
      'User-Agent': 'Service-Webhooks/1.0',
      'webhook-id': ids.deliveryId,
      'webhook-timestamp': String(unix),
      'webhook-signature': standardSignature(k, ids.deliveryId, unix, body),
    },
  };
}

/** The secrets of an endpoint row, opened; the previous one only while its overlap lasts. */
export function endpointKeys(
  box: { open(endpointId: string, sealed: string): string },
  e: {
    endpoint_id: string;
    secret_ciphertext: string;
    previous_secret_ciphertext?: string | null;
    previous_secret_expires_at?: Date | string | null;
  },
  now: Date = new Date(),
): SigningKeys {
  const overlapping =
    e.previous_secret_ciphertext && e.previous_secret_expires_at && new Date(e.previous_secret_expires_at) > now;
  return {
    current: box.open(e.endpoint_id, e.secret_ciphertext),
    previous: overlapping ? box.open(e.endpoint_id, e.previous_secret_ciphertext!) : null,
  };
}
