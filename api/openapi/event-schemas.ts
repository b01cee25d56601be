/**
 * The `data` of each event type (spec §6.3; docs/decisions/0019-event-data.md for what the spec leaves unshown).
 * Documentation of what the publishers build; subscription data is the API's own view schema.
 */
import { z } from 'zod';
import type { BehaviourSet } from '../../lib/behaviour-set';
import { SubscriptionViewSchema } from '../../domain/subscription-view-schema';
import { DELIVERY_EXHAUSTED, ENDPOINT_FAILING, ENDPOINT_RECOVERED } from '../../domain/events';

const timestamp = z.iso.datetime({ offset: true });
const reason = z.string().optional().describe('Given by staff (or the provider) with a refusal or a request');
/** docs/decisions/0118-event-sequence.md: per-subscription order of every event the subscription publishes. */
const sequence = z
  .number()
  .int()
  .min(1)
  .describe(
    'Per-subscription event number: 1 for subscription.created, then +1 per event of the subscription, with no gaps. Order and deduplicate by (subscription id, sequence).',
  );

/** @internal exported for its tests */
export const SubscriptionEventData = SubscriptionViewSchema.extend({
  sequence,
  reason: z
    .string()
    .optional()
    .describe(
      'subscription.rejected and subscription.voided; subscription.cancelled by staff (their reason) or on expiry (`expired`)',
    ),
  cancelled_by: z
    .enum(['investor', 'staff', 'expiry'])
    .optional()
    .describe(
      'subscription.cancelled: the investor (DELETE), staff (POST …/cancel) or the draft lifetime (docs/decisions/0368, 0369)',
    ),
  message: z
    .string()
    .optional()
    .describe('subscription.info_requested: what staff ask for; subscription.info_provided: the answer'),
  document_references: z
    .array(z.string())
    .optional()
    .describe('subscription.info_provided: the documents the investor pointed to'),
}).meta({ id: 'SubscriptionEventData' });

const SharesIssuedData = z
  .object({
    shares_id: z.string(),
    subscription_id: z.uuid(),
    investor_id: z.string(),
    offering_id: z.uuid(),
    security_class_id: z.uuid(),
    units: z.number().int(),
    issued_at: timestamp,
    sequence,
  })
  .meta({ id: 'SharesIssuedData' });

const KycData: Record<BehaviourSet, z.ZodType> = {
  A: z
    .object({
      kyc_case_id: z.uuid(),
      current_attempt_id: z.uuid().nullable(),
      user_id: z.string(),
      status: z.string().describe('Of the attempt (kyc.attempt.*) or the case (kyc.case.*)'),
      reason,
    })
    .meta({ id: 'KycCaseEventData' }),
  B: z
    .object({ session_id: z.uuid(), user_id: z.string(), status: z.string(), reason })
    .meta({ id: 'KycSessionEventData' }),
};

const accreditation = (idField: string, id: string) =>
  z
    .object({
      [idField]: z.uuid(),
      user_id: z.string(),
      status: z.string(),
      method: z.string(),
      document_id: z.uuid().optional().describe('accreditation.document.uploaded'),
      content_type: z.string().optional().describe('accreditation.document.uploaded'),
      reason,
    })
    .meta({ id });
const AccreditationData: Record<BehaviourSet, z.ZodType> = {
  A: accreditation('accreditation_id', 'AccreditationEventData'),
  B: accreditation('session_id', 'AccreditationSessionEventData'),
};

const TestPingData = z.object({ endpoint_id: z.uuid(), message: z.string() }).meta({ id: 'TestPingData' });

/** Sent when an endpoint is disabled after failing for too long. */
const EndpointDisabledData = z
  .object({ endpoint_id: z.uuid(), reason: z.string(), disabled_at: timestamp })
  .meta({ id: 'WebhookEndpointDisabledData' });
export const ENDPOINT_DISABLED = 'webhook.endpoint.disabled';

/*
 * The operational events (docs/decisions/0415-operational-events.md): ids, counts, times and a status,
 * never the endpoint's URL (it may carry credentials) nor an error's text.
 */
const lastResponseStatus = z
  .int()
  .min(100)
  .max(599)
  .nullable()
  .describe('The HTTP status of the last failed attempt; null when it got no answer (timeout, refused, TLS)');
const EndpointFailingData = z
  .object({
    endpoint_id: z.uuid(),
    failing_since: timestamp.describe('The first failed attempt since its last success'),
    failed_attempts: z.int().min(1).describe('Failed attempts in a row when this was published'),
    last_response_status: lastResponseStatus,
  })
  .meta({ id: 'WebhookEndpointFailingData' });
const EndpointRecoveredData = z
  .object({
    endpoint_id: z.uuid(),
    failing_since: timestamp,
    recovered_at: timestamp.describe('The first successful attempt after the failing spell'),
  })
  .meta({ id: 'WebhookEndpointRecoveredData' });
const DeliveryExhaustedData = z
  .object({
    delivery_id: z.uuid(),
    endpoint_id: z.uuid(),
    event_id: z.uuid(),
    event_type: z.string(),
    attempts: z.int().min(1),
    last_attempt_at: timestamp,
    last_response_status: lastResponseStatus,
  })
  .meta({ id: 'WebhookDeliveryExhaustedData' });

/**
 * Version 2 of subscription data (docs/decisions/0420-versioned-payloads.md; its renderer:
 * domain/payload-versions.ts): each money field an object carrying its currency.
 */
const Money = z
  .object({ amount: SubscriptionViewSchema.shape.total_amount, currency: z.string().describe('ISO 4217') })
  .meta({ id: 'Money' });
const SubscriptionEventDataV2 = SubscriptionEventData.extend({
  price_per_unit: Money,
  total_amount: Money,
  amount_received: Money.optional().describe('Once money was taken: every payment received for it'),
  amount_refunded: Money.optional().describe('Once money was taken: what went back of it'),
}).meta({ id: 'SubscriptionEventDataV2' });

/** The data schema of an event type in a set at a payload version: version 2 changes subscription data only. */
export function eventDataSchemaAt(set: BehaviourSet, type: string, version: string): z.ZodType {
  if (version === '2' && type.startsWith('subscription.')) return SubscriptionEventDataV2;
  return eventDataSchema(set, type);
}

/** The data schema of an event type in a set. */
export function eventDataSchema(set: BehaviourSet, type: string): z.ZodType {
  if (type.startsWith('subscription.')) return SubscriptionEventData;
  if (type === 'shares.issued') return SharesIssuedData;
  if (type.startsWith('kyc.')) return KycData[set];
  if (type.startsWith('accreditation.')) return AccreditationData[set];
  if (type === ENDPOINT_DISABLED) return EndpointDisabledData;
  if (type === ENDPOINT_FAILING) return EndpointFailingData;
  if (type === ENDPOINT_RECOVERED) return EndpointRecoveredData;
  if (type === DELIVERY_EXHAUSTED) return DeliveryExhaustedData;
  return TestPingData;
}
