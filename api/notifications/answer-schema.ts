import { z } from 'zod';
import { DELIVERY_STATUSES, RECOVERY_MODES } from '../../webhooks';
import { ordering } from './schema';
import { DELIVERED_TO } from './event-catalog';

/** The notifications API's answers (the `data` of the success envelope): built by views.ts, checked by ok(). */
const timestamp = z.iso.datetime({ offset: true });

const CertificateView = z
  .object({
    subject: z.string(),
    issuer: z.string(),
    valid_from: timestamp,
    valid_to: timestamp,
    fingerprint_sha256: z.string(),
  })
  .meta({ id: 'CertificateSummary' });
/** What the endpoint shows of its authentication: never the client key or client secret. */
const AuthenticationView = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('mtls'),
      client_certificate: CertificateView.describe('The first certificate of the chain we present'),
      ca_certificates: z
        .array(CertificateView)
        .nullable()
        .describe("What the receiver's certificate must chain to; null: the public roots"),
    }),
    z.object({
      type: z.literal('oauth2_client_credentials'),
      token_url: z.string(),
      client_id: z.string(),
      scope: z.string().nullable(),
    }),
  ])
  .meta({ id: 'WebhookEndpointAuthentication' });

/** spec §2.6 plus our id and timestamps (docs/decisions/0070-endpoint-record.md). */
export const EndpointView = z
  .object({
    id: z.uuid(),
    url: z.string(),
    description: z.string(),
    eventTypes: z.array(z.string()),
    status: z
      .enum(['enabled', 'disabled'])
      .describe('A disabled endpoint gets no deliveries until PATCH re-enables it'),
    disabled_reason: z
      .string()
      .nullable()
      .describe('gone (410), failing (every attempt failed for the configured period) or manual'),
    disabled_at: timestamp.nullable(),
    success_rate: z
      .object({
        window_hours: z.number().int(),
        attempts: z.number().int(),
        succeeded: z.number().int(),
        rate: z.number().nullable(),
      })
      .describe('Attempts over the last window_hours; rate is succeeded/attempts, null with no attempts'),
    previous_secret_expires_at: timestamp
      .nullable()
      .describe('Until then webhook-signature also carries a signature with the replaced secret'),
    ordering: ordering.describe(
      "per_subscription: one subscription's events arrive in order; a failing one holds back only that subscription's later events",
    ),
    max_in_flight: z
      .number()
      .int()
      .describe("Attempts in flight to the endpoint at most (the deployment's default unless set)"),
    rate_limit_per_second: z.number().int().nullable().describe('Deliveries per second at most; null: no limit'),
    send_traceparent: z
      .boolean()
      .describe(
        "Each POST carries a W3C `traceparent` header continuing the event's trace (not part of the signed content)",
      ),
    authentication: AuthenticationView.nullable().describe(
      'How deliveries authenticate at the transport (the client key or secret is never shown); null: by the signature alone',
    ),
    headers: z
      .record(
        z.string(),
        z.object({
          value: z.string().nullable().describe('null for a secret header: its value is never shown again'),
          secret: z.boolean(),
        }),
      )
      .describe('Static headers every POST carries, by name; {} when none'),
    filter: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('Only events whose data matches this filter are delivered (docs/decisions/0398); null: every event'),
    payload_version: z
      .string()
      .describe(
        "The payload version its deliveries are sent in (docs/decisions/0420); the envelope's `version` says it too",
      ),
    circuit: z
      .object({
        state: z.enum(['closed', 'open', 'half_open']),
        consecutive_failures: z.number().int(),
        opened_at: timestamp.nullable(),
        next_probe_at: timestamp.nullable(),
      })
      .describe(
        'The circuit breaker: open after repeated failures (no answer, 5xx, 408, 429); while open, new deliveries go straight onto their retry schedule without a request, and one probe per cool-down tests the endpoint; a success closes it',
      ),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'WebhookEndpoint' });
/** Register and rotate-secret only: the signing secret, shown this once (spec §8). */
export const EndpointWithSecret = EndpointView.extend({
  signing_secret: z.string().describe('whsec_…; HMAC-SHA256 key for the signature header'),
}).meta({
  id: 'WebhookEndpointWithSecret',
});
export const EndpointList = z
  .object({ items: z.array(EndpointView), next_cursor: z.string().nullable() })
  .meta({ id: 'WebhookEndpointList' });
export const EventTypesView = z.object({ eventTypes: z.array(z.string()) }).meta({ id: 'EventTypes' });
export const TestEventView = z
  .object({
    event_id: z.uuid(),
    event_type: z.string().describe('test.ping, or the type whose catalog example was sent'),
    delivery_id: z.uuid(),
  })
  .meta({ id: 'TestEvent' });

/** docs/decisions/0397-event-catalog.md: each type this deployment delivers, its schema and an example. */
export const EventCatalogView = z
  .object({
    items: z.array(
      z.object({
        event_type: z.string(),
        delivered_to: z
          .enum(DELIVERED_TO)
          .describe(
            'subscribers: endpoints subscribed to it or to "*"; named_only: only endpoints naming it; test_path: sent only by POST {endpoint}/test',
          ),
        introduced_by: z.string().describe('The spec section, or the decision record, that brought the type in'),
        payload_versions: z.array(z.string()).describe('The payload versions of the type; the envelope says which'),
        schema: z.record(z.string(), z.unknown()).describe("JSON Schema 2020-12 of the type's whole envelope"),
        example: z.record(z.string(), z.unknown()).describe('A generated envelope that satisfies the schema'),
        versions: z
          .array(
            z.object({
              version: z.string(),
              status: z
                .enum(['current', 'supported', 'deprecated'])
                .describe('current: the newest; deprecated: served until sunset_at, then refused'),
              sunset_at: z.iso.date().nullable().describe('When a deprecated version stops being served'),
              schema: z.record(z.string(), z.unknown()).describe('JSON Schema 2020-12 of the envelope at this version'),
              example: z
                .record(z.string(), z.unknown())
                .describe(
                  "Version 1's example as a delivery in this version carries it; POST {endpoint}/test sends it",
                ),
            }),
          )
          .describe("Each payload version of the type (docs/decisions/0420); schema and example above are version 1's"),
      }),
    ),
  })
  .meta({ id: 'EventCatalog' });

/** spec §2.7. */
export const DeliveryView = z
  .object({
    id: z.uuid(),
    event_id: z.uuid(),
    event_type: z.string(),
    endpoint_id: z.uuid(),
    status: z.enum(DELIVERY_STATUSES as [string, ...string[]]),
    attempt_count: z.number().int(),
    last_attempt_at: timestamp.nullable(),
    next_attempt_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'WebhookDelivery' });
const AttemptView = z
  .object({
    number: z.number().int(),
    attempted_at: timestamp,
    duration_ms: z
      .number()
      .int()
      .nullable()
      .describe('null while the attempt is in flight (its start is recorded before the POST)'),
    response_status: z.number().int().nullable(),
    response_body: z.string().nullable().describe('The first 4 KB of what the endpoint answered'),
    error: z.string().nullable().describe('timeout, or the network error code'),
    request_headers: z
      .record(z.string(), z.string())
      .nullable()
      .describe(
        'The request headers exactly as this attempt sent them, signature and timestamp headers included (they are made at each send); with signed_body, all the endpoint received. null: nothing was sent (circuit open, in doubt, not signable) or the attempt predates their keeping',
      ),
  })
  .meta({ id: 'WebhookAttempt' });
export const DeliveryDetail = DeliveryView.extend({
  attempts: z.array(AttemptView),
  payload_version: z
    .string()
    .describe(
      "The payload version signed_body is in: its endpoint's pin when the delivery was planned (docs/decisions/0420)",
    ),
  signed_body: z
    .string()
    .nullable()
    .describe(
      "The exact bytes every attempt sent and signed (null until the event was first rendered for delivery); each attempt's headers are in its request_headers",
    ),
}).meta({
  id: 'WebhookDeliveryDetail',
});
export const DeliveryList = z
  .object({ items: z.array(DeliveryView), next_cursor: z.string().nullable() })
  .meta({ id: 'WebhookDeliveryList' });

/** A bulk recovery: its window, its progress, and `cancelling` once a stop was asked for. */
export const RecoveryView = z
  .object({
    id: z.uuid(),
    endpoint_id: z.uuid(),
    mode: z
      .enum(RECOVERY_MODES)
      .describe(
        'failed: retries failed and exhausted deliveries; missing: first delivers what the endpoint never received',
      ),
    since: timestamp,
    until: timestamp.describe(
      "The end of the window (the recovery's start unless one was given): deliveries created later are not part of it",
    ),
    status: z.enum(['running', 'cancelling', 'completed', 'cancelled']),
    total: z
      .number()
      .int()
      .describe(
        'Failed or exhausted deliveries in the window when the recovery started, and with mode missing the events the endpoint never received',
      ),
    done: z.number().int(),
    skipped: z.number().int(),
    created_at: timestamp,
    updated_at: timestamp,
    finished_at: timestamp.nullable(),
  })
  .meta({ id: 'WebhookRecovery' });
export const RecoveryList = z
  .object({ items: z.array(RecoveryView), next_cursor: z.string().nullable() })
  .meta({ id: 'WebhookRecoveryList' });

/** One event as the §6.3 envelope that was (or would have been) delivered; `data` is the type's (see webhooks). */
const EventEnvelopeView = z
  .object({
    event_id: z.uuid(),
    event_type: z.string(),
    source: z.string(),
    org_id: z.string(),
    version: z.string(),
    timestamp,
    data: z.record(z.string(), z.unknown()).describe("The event type's data, as documented under webhooks"),
  })
  .meta({ id: 'EventEnvelope' });
export const EventList = z
  .object({
    items: z.array(EventEnvelopeView),
    next_cursor: z.string().nullable().describe('Where to continue from, also when nothing new arrived yet'),
    has_more: z.boolean(),
  })
  .meta({ id: 'EventList' });

const rate = z.number().min(0).max(1).nullable().describe('succeeded / attempts; null with no attempts');
/** An endpoint's delivery health: a success-rate series, the latest failures, what waits on a retry. */
export const EndpointHealthView = z
  .object({
    endpoint_id: z.uuid(),
    bucket_minutes: z.number().int(),
    attempts: z.number().int(),
    succeeded: z.number().int(),
    success_rate: rate,
    series: z
      .array(
        z.object({ start: timestamp, attempts: z.number().int(), succeeded: z.number().int(), success_rate: rate }),
      )
      .describe('One point per bucket of the window, empty ones included'),
    recent_failures: z.array(
      z.object({
        delivery_id: z.uuid(),
        event_type: z.string(),
        delivery_status: z.enum(DELIVERY_STATUSES as [string, ...string[]]),
        attempt: z.number().int(),
        attempted_at: timestamp,
        response_status: z.number().int().nullable(),
        error: z.string().nullable(),
      }),
    ),
    waiting_on_retry: z.array(DeliveryView),
  })
  .meta({ id: 'WebhookEndpointHealth' });
