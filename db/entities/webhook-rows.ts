/**
 * Row shapes of the webhook tables (db/migrations/0005-webhooks.ts). Webhook code reads and writes
 * them with the query builder, like the outbox: the delivery path is hot and set-based
 * (one insert per fan-out, one update per attempt), so no identity map is involved.
 */
export type DeliveryStatus = 'pending' | 'success' | 'failed' | 'exhausted';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'success', 'failed', 'exhausted'];

export interface WebhookEndpointRow {
  id: string;
  org_id: string;
  url: string;
  description: string;
  event_types: string[];
  /** AES-256-GCM sealed (webhooks/secrets/secret-box.ts); never leaves the server in this form. */
  secret_ciphertext: string;
  /** The secret before the last rotation, sealed the same way; signs beside the new one until it expires. */
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
  status: EndpointStatus;
  disabled_reason: string | null;
  disabled_at: Date | null;
  /** First failed attempt since the last success; null while the endpoint succeeds. */
  failing_since: Date | null;
  /** `per_subscription`: one subscription's events arrive in order. */
  ordering: EndpointOrdering;
  /** Attempts in flight to it at most, from every worker; null: WEBHOOK_DEFAULT_MAX_IN_FLIGHT. */
  max_in_flight: number | null;
  /** Deliveries per second at most; null: no limit. */
  rate_limit_per_second: number | null;
  /** POSTs carry a W3C `traceparent` header. */
  send_traceparent: boolean;
  /** How we authenticate at the transport (docs/decisions/0319); null: by the signature alone. */
  authentication: EndpointAuthentication | null;
  /** The client key (mtls) or client secret (oauth2), sealed like the signing secret; null with no authentication. */
  authentication_secret_ciphertext: string | null;
  /** Only events whose data matches (docs/decisions/0398-payload-filters.md); null: every event it subscribes to. */
  filter: unknown;
  /** The payload version its deliveries are planned in (docs/decisions/0420-versioned-payloads.md). */
  payload_version: string;
  /** Static headers every POST carries (docs/decisions/0400-custom-headers-per-endpoint.md); a secret one's value is null here. */
  headers: EndpointHeader[] | null;
  /** The secret headers' values, one sealed JSON object of name to value; null with none. */
  headers_secret_ciphertext: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

/** An endpoint as read, with its circuit breaker (db/migrations/0016-delivery-queue.ts, webhook_endpoint_flow). */
export interface WebhookEndpointReadRow extends WebhookEndpointRow {
  circuit_state: 'closed' | 'open' | 'half_open';
  consecutive_failures: number;
  circuit_opened_at: Date | null;
  circuit_probe_at: Date | null;
}

type EndpointStatus = 'enabled' | 'disabled';

/** One custom header as stored: a secret one's value is sealed apart (headers_secret_ciphertext) and null here. */
export interface EndpointHeader {
  name: string;
  secret: boolean;
  value: string | null;
}

/** What an endpoint's authentication keeps in the clear (its secret is sealed beside it). */
export type EndpointAuthentication =
  | {
      type: 'mtls';
      /** PEM: our client certificate (and any intermediates) presented to the receiver. */
      client_certificate: string;
      /** PEM: the CA(s) the receiver's certificate must chain to instead of the public roots; null: the public roots. */
      ca_certificate: string | null;
    }
  | {
      type: 'oauth2_client_credentials';
      token_url: string;
      client_id: string;
      scope: string | null;
    };
export const ENDPOINT_ORDERINGS = ['none', 'per_subscription'] as const;
export type EndpointOrdering = (typeof ENDPOINT_ORDERINGS)[number];

type RecoveryStatus = 'running' | 'completed' | 'cancelled';
export const RECOVERY_MODES = ['failed', 'missing'] as const;
type RecoveryMode = (typeof RECOVERY_MODES)[number];

/** A bulk recovery of one endpoint (db/migrations/0009-webhook-health.ts). */
export interface WebhookRecoveryRow {
  id: string;
  org_id: string;
  endpoint_id: string;
  since: Date;
  /** The recovery's start: deliveries created later are not part of it. */
  until: Date;
  status: RecoveryStatus;
  total: number;
  done: number;
  skipped: number;
  cursor_created_at: Date | null;
  cursor_id: string | null;
  /** `missing` also plans the events the endpoint never got a delivery of, first (docs/decisions/0396-replay-missing.md). */
  mode: RecoveryMode;
  missing_cursor_seq: string | null;
  missing_finished_at: Date | null;
  cancel_requested_at: Date | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

export interface WebhookDeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  org_id: string;
  event_type: string;
  /** The payload version every attempt sends, the endpoint's pin when it was planned (decision 0420). */
  payload_version: string;
  status: DeliveryStatus;
  attempt_count: number;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookAttemptRow {
  delivery_id: string;
  number: number;
  attempted_at: Date;
  /** Null while the attempt is in flight (recorded before its POST). */
  duration_ms: number | null;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  /** The wait the endpoint asked for (Retry-After, capped), kept for a replay of the attempt; bigint, read as text. */
  retry_after_ms: string | null;
  /** The request headers as sent (db/migrations/0055-attempt-request-headers.ts); null: nothing sent, or not kept then. */
  request_headers: Record<string, string> | null;
}
