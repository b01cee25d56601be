import {
  headersShown,
  SUCCESS_WINDOW_HOURS,
  type SuccessRate,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookEndpointReadRow,
  type WebhookRecoveryRow,
} from '../../webhooks';
import { authenticationView } from './authentication-view';

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/**
 * spec §2.6 plus our id, timestamps and health; the signing secret is added only on
 * create and rotate. `previous_secret_expires_at`: until then the replaced secret still signs.
 */
export const endpointView = (
  r: WebhookEndpointReadRow,
  limits: { defaultMaxInFlight: number },
  successRate?: SuccessRate,
) => ({
  id: r.id,
  url: r.url,
  description: r.description,
  eventTypes: r.event_types,
  status: r.status,
  disabled_reason: r.disabled_reason,
  disabled_at: iso(r.disabled_at),
  ordering: r.ordering,
  max_in_flight: r.max_in_flight ?? limits.defaultMaxInFlight,
  rate_limit_per_second: r.rate_limit_per_second,
  send_traceparent: r.send_traceparent,
  authentication: authenticationView(r.authentication),
  // A secret header's value is never shown again (docs/decisions/0400-custom-headers-per-endpoint.md).
  headers: headersShown(r.headers),
  filter: (r.filter ?? null) as Record<string, unknown> | null,
  payload_version: r.payload_version,
  circuit: {
    state: r.circuit_state,
    consecutive_failures: r.consecutive_failures,
    opened_at: r.circuit_state === 'closed' ? null : iso(r.circuit_opened_at),
    next_probe_at: r.circuit_state === 'open' ? iso(r.circuit_probe_at) : null,
  },
  success_rate: successRate ?? { window_hours: SUCCESS_WINDOW_HOURS, attempts: 0, succeeded: 0, rate: null },
  previous_secret_expires_at:
    r.previous_secret_expires_at && new Date(r.previous_secret_expires_at) > new Date()
      ? iso(r.previous_secret_expires_at)
      : null,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/** A bulk recovery and its progress. */
export const recoveryView = (r: WebhookRecoveryRow) => ({
  id: r.id,
  endpoint_id: r.endpoint_id,
  mode: r.mode,
  since: iso(r.since),
  until: iso(r.until),
  status: r.status === 'running' && r.cancel_requested_at ? 'cancelling' : r.status,
  total: r.total,
  done: r.done,
  skipped: r.skipped,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  finished_at: iso(r.finished_at),
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
  request_headers: r.request_headers,
});
