import type { BehaviourSet } from '../../lib/behaviour-set';
import { EXPLICIT_ONLY_EVENT_TYPES, supportedEventTypes } from '../../domain/events';
import { ENDPOINT_DISABLED, eventDataSchema } from './event-schemas';
import { outputSchema, type JsonSchema } from './json-schema';

const header = (
  name: string,
  description: string,
  schema: JsonSchema = { type: 'string' },
  required = true,
): JsonSchema => ({ name, in: 'header', required, description, schema });

/** spec §6.3 headers, and the Standard Webhooks headers sent beside them (issue 12). */
const DELIVERY_HEADERS: JsonSchema[] = [
  header(
    'X-Service-Signature',
    'sha256=<lowercase hex HMAC-SHA256 of the raw body, keyed with the signing_secret> (spec §6.4)',
    { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' },
  ),
  header('X-Service-Event-Type', 'The event type, as in the body'),
  header('X-Service-Event-Id', 'The event UUID; deduplicate by it (spec §6.1)', { type: 'string', format: 'uuid' }),
  header('X-Service-Delivery-Id', 'The delivery UUID: the same on every attempt of this delivery', {
    type: 'string',
    format: 'uuid',
  }),
  header('X-Service-Timestamp', 'The event timestamp, ISO 8601', { type: 'string', format: 'date-time' }),
  header('User-Agent', 'Service-Webhooks/1.0', { const: 'Service-Webhooks/1.0' }),
  header('webhook-id', 'Standard Webhooks: the delivery id, the same on every attempt (deduplicate by it)', {
    type: 'string',
  }),
  header('webhook-timestamp', 'Standard Webhooks: Unix seconds when this attempt was signed (reject stale ones)', {
    type: 'string',
    pattern: '^[0-9]+$',
  }),
  header(
    'webhook-signature',
    'Standard Webhooks: space-separated "v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">"; during a secret rotation overlap one entry per valid secret',
    { type: 'string' },
  ),
  header(
    'traceparent',
    'W3C Trace Context of the trace this delivery belongs to; sent only to endpoints with send_traceparent on, not signed (issue 21)',
    { type: 'string', pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' },
    false,
  ),
];

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type the deployment's set delivers
 * (spec §6.2), each a POST of the §6.3 envelope with that type's `data`, and the delivery headers.
 */
export function webhooksSection(set: BehaviourSet, components: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const section: Record<string, JsonSchema> = {};
  for (const type of [...supportedEventTypes(set), ENDPOINT_DISABLED]) {
    section[type] = {
      post: {
        operationId: `event ${type}`,
        tags: ['webhooks'],
        summary: EXPLICIT_ONLY_EVENT_TYPES.includes(type)
          ? `${type}, delivered only to endpoints that name it ("*" does not include it: not a spec §6.2 type)`
          : `${type}, delivered to endpoints subscribed to it (or to "*")`,
        description:
          'Sent as an HTTP POST to each subscribed endpoint. Answer 2xx within 30 seconds; anything else is retried 8 times in all (after 30 s, 2 min, 15 min, 1 h, 4 h, 12 h, 24 h; spec §6.5). Verify the signature over the raw bytes before parsing, and deduplicate by event_id: a delivery may arrive more than once.',
        parameters: DELIVERY_HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: envelope(type, outputSchema(eventDataSchema(set, type), components)) },
          },
        },
        responses: {
          '2XX': { description: 'Taken: no more attempts' },
          default: { description: 'Any other answer, or none within 30 seconds: the delivery is retried' },
        },
      },
    };
  }
  return section;
}

function envelope(type: string, data: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['event_id', 'event_type', 'source', 'org_id', 'version', 'timestamp', 'data'],
    properties: {
      event_id: { type: 'string', format: 'uuid' },
      event_type: { const: type },
      source: { type: 'string', description: 'service.identity, service.issuance or service.notifications' },
      org_id: { type: 'string', format: 'uuid' },
      version: { const: '1' },
      timestamp: { type: 'string', format: 'date-time' },
      data,
    },
  };
}
