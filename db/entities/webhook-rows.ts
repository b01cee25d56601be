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
  /** AES-256-GCM sealed (activities/webhook-secret-box.ts); never leaves the server in this form. */
  secret_ciphertext: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface WebhookDeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  org_id: string;
  event_type: string;
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
}
