import type { z } from 'zod';
import type * as audit from '../api/audit/schema';
import type * as issuance from '../api/issuance/schema';
import type * as offerings from '../api/issuance/offerings-schema';
import type * as schema from '../api/notifications/answer-schema';
import type { ListDeliveriesQuery } from '../api/notifications/schema';

// The shapes the console reads from the JSON API, inferred from the same zod schemas the API's
// answers are checked against (and its OpenAPI document is generated from), never copied by hand.
export type Endpoint = z.infer<typeof schema.EndpointView>;
export type EndpointWithSecret = z.infer<typeof schema.EndpointWithSecret>;
export type EndpointList = z.infer<typeof schema.EndpointList>;
export type EndpointHealth = z.infer<typeof schema.EndpointHealthView>;
export type EventTypes = z.infer<typeof schema.EventTypesView>;
export type EventCatalog = z.infer<typeof schema.EventCatalogView>;
export type TestEvent = z.infer<typeof schema.TestEventView>;
export type DeliveryDetail = z.infer<typeof schema.DeliveryDetail>;
export type DeliveryList = z.infer<typeof schema.DeliveryList>;
export type DeliveryQuery = z.input<typeof ListDeliveriesQuery>;
export type Recovery = z.infer<typeof schema.RecoveryView>;
export type RecoveryList = z.infer<typeof schema.RecoveryList>;
export type EventList = z.infer<typeof schema.EventList>;
export type QueuePage = z.infer<typeof issuance.ReviewQueue>;
export type QueueItem = QueuePage['items'][number];
export type AttentionPage = z.infer<typeof issuance.AttentionList>;
export type OfferingList = z.infer<typeof offerings.OfferingList>;
export type Offering = z.infer<typeof offerings.OfferingView>;
export type SubscriptionList = z.infer<typeof issuance.SubscriptionList>;
export type Activity = z.infer<typeof issuance.SubscriptionActivity>;
export type AuditEventList = z.infer<typeof audit.AuditEventList>;
export type RefundIntentList = z.infer<typeof issuance.RefundIntents>;
