import { z } from 'zod';
import { DELIVERY_STATUSES, ENDPOINT_ORDERINGS } from '../../db/entities/webhook-rows';

export const EndpointParams = z.object({ id: z.uuid() });
export const DeliveryParams = z.object({ delivery_id: z.uuid() });

// The scheme and host policy (https; http to loopback when allowed) is url-policy.ts's: a 400.
const url = z.url().max(2048);
const description = z.string().trim().max(1000);
/** Subscribed types, checked against the set's list in event-type-policy.ts; "*" means all. */
const eventTypes = z.array(z.string().min(1).max(100)).min(1).max(100);
/** Issue 12: `per_subscription` delivers one subscription's events in order. */
const ordering = z.enum(ENDPOINT_ORDERINGS);

/** spec §4.3 register body. */
export const RegisterEndpointBody = z.strictObject({
  url,
  description: description.default(''),
  eventTypes,
  ordering: ordering.default('none'),
});
export type RegisterEndpointBody = z.infer<typeof RegisterEndpointBody>;

/** spec §4.3 update body: url and/or description; `status` re-enables (or disables) the endpoint (issue 12). */
export const UpdateEndpointBody = z
  .strictObject({ url: url.optional(), description: description.optional(), status: z.enum(['enabled', 'disabled']).optional(), ordering: ordering.optional() })
  .refine((b) => b.url !== undefined || b.description !== undefined || b.status !== undefined || b.ordering !== undefined, 'give url, description, status and/or ordering');
export type UpdateEndpointBody = z.infer<typeof UpdateEndpointBody>;

export const SetEventTypesBody = z.strictObject({ eventTypes });

const limit = z.coerce.number().int().min(1).max(100).default(50);
const cursor = z.string().max(200).optional();

export const ListEndpointsQuery = z.strictObject({ limit, cursor });

/** spec §4.3 delivery list; `event_type` is our name for the event-type filter (docs/decisions.md). */
export const ListDeliveriesQuery = z.strictObject({
  endpoint_id: z.uuid().optional(),
  status: z.enum(DELIVERY_STATUSES as [string, ...string[]]).optional(),
  event_type: z.string().min(1).max(100).optional(),
  limit,
  cursor,
});
export type ListDeliveriesQuery = z.infer<typeof ListDeliveriesQuery>;

export const RecoveryParams = z.object({ id: z.uuid(), recovery_id: z.uuid() });

/** Bulk recovery: retry the endpoint's failed and exhausted deliveries created at or after `since`. */
export const StartRecoveryBody = z.strictObject({ since: z.iso.datetime({ offset: true }) });
export type StartRecoveryBody = z.infer<typeof StartRecoveryBody>;

/** The events API: oldest first; `after` is the `next_cursor` of the previous page. */
export const ListEventsQuery = z.strictObject({
  event_type: z.string().min(1).max(100).optional(),
  after: z.string().max(200).optional(),
  limit,
});
export type ListEventsQuery = z.infer<typeof ListEventsQuery>;
