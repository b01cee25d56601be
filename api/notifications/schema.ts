import { z } from 'zod';
import { DELIVERY_STATUSES, ENDPOINT_ORDERINGS, RECOVERY_MODES } from '../../webhooks';
import { PAYLOAD_VERSIONS } from '../../domain/payload-versions';
import { CustomHeaders } from './headers-schema';
import { PayloadFilterInput } from './filter-schema';
import { shownText } from '../../lib/shown-text';

/** The notifications API's requests: params, bodies and queries (its answers: answer-schema.ts). */
export const EndpointParams = z.object({ id: z.uuid() });
export const DeliveryParams = z.object({ delivery_id: z.uuid() });

// The scheme and host policy (https; http to loopback when allowed) is url-policy.ts's: a 400.
const url = z.url().max(2048);
const description = shownText(1000, 0);
/** Subscribed types, checked against the set's list in event-type-policy.ts; "*" means all. */
const eventTypes = z.array(z.string().min(1).max(100)).min(1).max(100);
/** `per_subscription` delivers one subscription's events in order. */
export const ordering = z.enum(ENDPOINT_ORDERINGS);
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
const pem = (what: string, max = 32_768, tooLong?: string) =>
  z
    .string()
    .min(1)
    .max(max, tooLong)
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
      // An RSA key of 4096 bits is about 3.3 KB of PEM; 8 KB leaves room for line ends and labels.
      clientKey: pem(
        "The client certificate's private key, unencrypted (PKCS#8, PKCS#1 or SEC1): RSA of 2048 to 4096 bits, EC on P-256 or P-384, or Ed25519",
        8192,
        'at most 8192 characters: a PEM private key, RSA of 2048 to 4096 bits, EC on P-256 or P-384, or Ed25519',
      ),
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

/** The payload version an endpoint's deliveries are rendered in (docs/decisions/0420-versioned-payloads.md). */
const payloadVersion = z
  .enum(PAYLOAD_VERSIONS, { error: `Not a payload version served here; supported: ${PAYLOAD_VERSIONS.join(', ')}` })
  .describe(
    "The payload version this endpoint's deliveries are sent in: 1 is the spec's shape; each type's versions are in GET /notifications/event-catalog",
  );

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
  headers: CustomHeaders(false).optional(),
  filter: PayloadFilterInput.optional(),
  payloadVersion: payloadVersion.optional().describe('Unset: "1", the spec\'s shape'),
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
      .describe(
        'Replaces the authentication whole (secrets included); null: the signature alone. Required (or null) when url moves to another origin: authentication does not follow it',
      ),
    headers: CustomHeaders(true)
      .nullable()
      .optional()
      .describe(
        'Replaces the headers whole; null or {} removes them all. A secret header given without its value keeps the value it has',
      ),
    filter: PayloadFilterInput.nullable().optional().describe('Replaces the payload filter; null: every event again'),
    payloadVersion: payloadVersion
      .optional()
      .describe('Events published from now on are sent in this version; deliveries already made keep theirs'),
  })
  .refine(
    (b) => Object.values(b).some((v) => v !== undefined),
    'give url, description, status, ordering, maxInFlight, rateLimitPerSecond, sendTraceparent, authentication, headers, filter and/or payloadVersion',
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
 * `until` (an explicit end; without one the range ends when the recovery starts); `missing` first
 * plans the events of the window the endpoint never received (docs/decisions/0396-replay-missing.md).
 */
export const StartRecoveryBody = z
  .strictObject({
    since: z.iso
      .datetime({ offset: true })
      .describe('Deliveries (and, with mode missing, events) created at or after this time; not in the future'),
    until: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('Deliveries created at or before this time: after since, not in the future; default: now'),
    mode: z
      .enum(RECOVERY_MODES)
      .default('failed')
      .describe(
        'failed: retry failed and exhausted deliveries. missing: first deliver, in publication order, the events the endpoint subscribes to but never received (published while it was disabled, or before it existed; since within event retention), then retry as failed does',
      ),
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

/** The test path's optional body: which type's catalog example to send instead of a test.ping (docs/decisions/0397-event-catalog.md). */
export const TestEventBody = z.strictObject({
  event_type: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('An event type of GET /notifications/event-catalog: its example is sent, to this endpoint only'),
});
