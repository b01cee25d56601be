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

/** spec §6.4: `sha256=` + lowercase hex HMAC-SHA256 of the raw body bytes, keyed with the secret. */
export function signatureOf(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** spec §6.3 headers, exactly. */
export function signedRequest(
  secret: string,
  body: string,
  ids: { eventId: string; eventType: string; deliveryId: string; timestamp: string },
): SignedRequest {
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'X-Service-Signature': signatureOf(secret, body),
      'X-Service-Event-Type': ids.eventType,
      'X-Service-Event-Id': ids.eventId,
      'X-Service-Delivery-Id': ids.deliveryId,
      'X-Service-Timestamp': ids.timestamp,
      'User-Agent': 'Service-Webhooks/1.0',
    },
  };
}
