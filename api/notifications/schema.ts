import { z } from 'zod';
import { DELIVERY_STATUSES, ENDPOINT_ORDERINGS } from '../../webhooks';

export const EndpointParams = z.object({ id: z.uuid() });
export const DeliveryParams = z.object({ delivery_id: z.uuid() });

// The scheme and host policy (https; http to loopback when allowed) is url-policy.ts's: a 400.
const url = z.url().max(2048);
const description = z.string().trim().max(1000);
/** Subscribed types, checked against the set's list in event-type-policy.ts; "*" means all. */
const eventTypes = z.array(z.string().min(1).max(100)).min(1).max(100);
/** `per_subscription` delivers one subscription's events in order. */
const ordering = z.enum(ENDPOINT_ORDERINGS);
/** Attempts in flight to the endpoint at most, from every worker. */
const maxInFlight = z.int().min(1).max(256).describe('Attempts in flight to the endpoint at most (1-256)');
/** Deliveries per second at most; those above it wait their turn, none is dropped. */
const rateLimitPerSecond = z
  .int()
  .min(1)
  .max(10_000)
  .describe('Deliveries per second at most (1-10000); deliveries above it wait, none is dropped');
/** POSTs carry the W3C `traceparent` of the delivery's trace (not signed). */
const sendTraceparent = z
  .boolean()
  .describe(
    "Each POST carries a W3C `traceparent` header continuing the event's trace (not part of the signed content)",
  );

/** Printable ASCII (RFC 6749 VSCHAR), as client ids and secrets are. */
const vschar = /^[\x20-\x7E]+$/;
const pem = (what: string) =>
  z
    .string()
    .min(1)
    .max(32_768)
    .describe(`${what}, PEM (checked: it must parse; see the decision on authenticated receivers)`);
/**
 * How we authenticate at the transport to an integrator that demands it. Secrets (the client
 * key, the client secret) are sealed and never shown again; the view shows the rest.
 */
export const AuthenticationInput = z.discriminatedUnion('type', [
  z
    .strictObject({
      type: z.literal('mtls'),
      clientCertificate: pem('Our client certificate (then any intermediates)'),
      clientKey: pem("The client certificate's private key, unencrypted (PKCS#8, PKCS#1 or SEC1)"),
      caCertificate: pem(
        "The CA certificate(s) the receiver's server certificate must chain to, instead of the public roots",
      ).optional(),
    })
    .describe('Mutual TLS: every POST presents this client certificate'),
  z
    .strictObject({
      type: z.literal('oauth2_client_credentials'),
      tokenUrl: z.url().max(2048).describe("The authorization server's token endpoint (https)"),
      clientId: z.string().min(1).max(256).regex(vschar),
      clientSecret: z.string().min(1).max(1024).regex(vschar).describe('Sent to the token endpoint only (HTTP Basic)'),
      scope: z
        .string()
        .max(1000)
        .regex(/^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/)
        .optional()
        .describe('Space-separated scopes to ask for'),
    })
    .describe('OAuth2 client credentials: every POST carries a bearer token from the token endpoint'),
]);
export type AuthenticationInput = z.infer<typeof AuthenticationInput>;

/** spec §4.3 register body. */
export const RegisterEndpointBody = z.strictObject({
  url,
  description: description.default(''),
  eventTypes,
  ordering: ordering.default('none'),
  maxInFlight: maxInFlight.optional(),
  rateLimitPerSecond: rateLimitPerSecond.optional(),
  sendTraceparent: sendTraceparent.default(false),
  authentication: AuthenticationInput.optional(),
});
export type RegisterEndpointBody = z.infer<typeof RegisterEndpointBody>;

/**
 * spec §4.3 update body: url and/or description; `status` re-enables (or disables) the endpoint;
 * the delivery limits.
 */
export const UpdateEndpointBody = z
  .strictObject({
    url: url.optional(),
    description: description.optional(),
    status: z.enum(['enabled', 'disabled']).optional(),
    ordering: ordering.optional(),
    maxInFlight: maxInFlight.nullable().optional().describe('null: back to the deployment default'),
    rateLimitPerSecond: rateLimitPerSecond.nullable().optional().describe('null: no limit'),
    sendTraceparent: sendTraceparent.optional(),
    authentication: AuthenticationInput.nullable()
      .optional()
      .describe('Replaces the authentication whole (secrets included); null: the signature alone'),
  })
  .refine(
    (b) => Object.values(b).some((v) => v !== undefined),
    'give url, description, status, ordering, maxInFlight, rateLimitPerSecond, sendTraceparent and/or authentication',
  );
export type UpdateEndpointBody = z.infer<typeof UpdateEndpointBody>;

export const SetEventTypesBody = z.strictObject({ eventTypes });

const limit = z.coerce.number().int().min(1).max(100).default(50);
const cursor = z.string().max(200).optional();

export const ListEndpointsQuery = z.strictObject({ limit, cursor });

/**
 * spec §4.3 delivery list; `event_type` is our name for the event-type filter
 * (docs/decisions/0075-delivery-event-type-filter.md).
 */
export const ListDeliveriesQuery = z.strictObject({
  endpoint_id: z.uuid().optional(),
  status: z.enum(DELIVERY_STATUSES as [string, ...string[]]).optional(),
  event_type: z.string().min(1).max(100).optional(),
  /** One event's deliveries: where it went (the console's events view). */
  event_id: z.uuid().optional(),
  /** Created at or after this time (the console's time range). */
  created_after: z.iso.datetime({ offset: true }).optional(),
  /** Created before this time. */
  created_before: z.iso.datetime({ offset: true }).optional(),
  limit,
  cursor,
});
export type ListDeliveriesQuery = z.infer<typeof ListDeliveriesQuery>;

export const RecoveryParams = z.object({ id: z.uuid(), recovery_id: z.uuid() });

/**
 * Bulk recovery: retry the endpoint's failed and exhausted deliveries created from `since` to
 * `until` (an explicit end; without one the range ends when the recovery starts).
 */
export const StartRecoveryBody = z
  .strictObject({
    since: z.iso.datetime({ offset: true }).describe('Deliveries created at or after this time; not in the future'),
    until: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('Deliveries created at or before this time: after since, not in the future; default: now'),
  })
  .superRefine((b, ctx) => {
    const now = Date.now();
    const since = Date.parse(b.since);
    const until = b.until === undefined ? undefined : Date.parse(b.until);
    if (since > now) ctx.addIssue({ code: 'custom', path: ['since'], message: 'since must not be in the future' });
    if (until !== undefined && until <= since)
      ctx.addIssue({ code: 'custom', path: ['until'], message: 'until must be after since' });
    if (until !== undefined && until > now)
      ctx.addIssue({
        code: 'custom',
        path: ['until'],
        message: 'until must not be in the future (leave it out for now)',
      });
  });
export type StartRecoveryBody = z.infer<typeof StartRecoveryBody>;
/** An endpoint's recoveries, newest first. */
export const ListRecoveriesQuery = z.strictObject({ limit, cursor });

/** The events API: oldest first; `after` is the `next_cursor` of the previous page. */
export const ListEventsQuery = z.strictObject({
  event_type: z.string().min(1).max(100).optional(),
  after: z.string().max(200).optional(),
  limit,
});
export type ListEventsQuery = z.infer<typeof ListEventsQuery>;

// ---- Answers (the `data` of the success envelope); built by views.ts, checked by ok() ----
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
  .object({ event_id: z.uuid(), event_type: z.literal('test.ping'), delivery_id: z.uuid() })
  .meta({ id: 'TestEvent' });

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
    since: timestamp,
    until: timestamp.describe(
      "The end of the window (the recovery's start unless one was given): deliveries created later are not part of it",
    ),
    status: z.enum(['running', 'cancelling', 'completed', 'cancelled']),
    total: z.number().int().describe('Failed or exhausted deliveries in the window when the recovery started'),
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
