import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointRow } from '../../db/entities/webhook-rows';

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** spec §2.6 plus our id and timestamps; the signing secret is added only on create and rotate. */
export const endpointView = (r: WebhookEndpointRow) => ({
  id: r.id,
  url: r.url,
  description: r.description,
  eventTypes: r.event_types,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/** spec §2.7: status plus what a reader needs to find and reason about the delivery. */
export const deliveryView = (r: WebhookDeliveryRow) => ({
  id: r.id,
  event_id: r.event_id,
  event_type: r.event_type,
  endpoint_id: r.endpoint_id,
  status: r.status,
  attempt_count: r.attempt_count,
  last_attempt_at: iso(r.last_attempt_at),
  next_attempt_at: iso(r.next_attempt_at),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

export const attemptView = (r: WebhookAttemptRow) => ({
  number: r.number,
  attempted_at: iso(r.attempted_at),
  duration_ms: r.duration_ms,
  response_status: r.response_status,
  response_body: r.response_body,
  error: r.error,
});
