import { z } from 'zod';
import { OFFLINE_PAYMENT_METHODS, PAYMENT_METHODS, SETUP_PAYMENT_METHODS } from '../../domain/subscription';
import { isDecimalAmount, UNIT_DECIMALS, unitsToMillionths } from '../../lib/money';
import { SubscriptionViewSchema } from '../../domain/subscription-view-schema';
import { DeliveryView } from '../notifications/answer-schema';
import { shownText } from '../../lib/shown-text';
import { REFUND_INTENT_STATUSES } from '../../domain/refund-intents';

export const SubscriptionParams = z.object({ subscription_id: z.uuid() });
export const OfferingParams = z.object({ offering_id: z.uuid() });
export const ReferenceCodeParams = z.object({ reference_code: z.string().trim().min(1).max(40) });

/** spec §4.1 create body. */
export const CreateSubscriptionBody = z.strictObject({
  securityClassId: z.uuid(),
  // spec §8 says > 0; fractions up to 6 decimals (docs/decisions/0060-fractional-units.md).
  unitsSubscribed: z
    .number()
    .positive()
    .max(1_000_000_000)
    .refine((u) => unitsToMillionths(u) !== null, `unitsSubscribed may have at most ${UNIT_DECIMALS} decimals`),
  trancheId: z.uuid().optional(),
  paymentMethod: z.enum(PAYMENT_METHODS).optional(),
  /** Self-reported by the investor. */
  accreditationStatus: shownText(100).optional(),
  suitabilityConfirmed: z.boolean().optional(),
  riskAcknowledgmentSigned: z.boolean().optional(),
});
export type CreateSubscriptionBody = z.infer<typeof CreateSubscriptionBody>;

/** spec §4.1 sign-agreement body. */
export const SignAgreementBody = z.strictObject({
  /** The investor's name as digital signature. */
  signature: shownText(200),
  signedAt: z.iso.datetime({ offset: true }),
  ipAddress: z.ipv4().optional(),
});
export type SignAgreementBody = z.infer<typeof SignAgreementBody>;

const redirectUrl = z.url({ protocol: /^https?$/ }).max(2048);

/** spec §4.1 setup-session body (Set A). */
export const SetupSessionBody = z.strictObject({
  paymentMethod: z.enum(SETUP_PAYMENT_METHODS),
  successUrl: redirectUrl,
  cancelUrl: redirectUrl,
});

/** spec §4.1 checkout-session body (Set B). */
export const CheckoutSessionBody = z.strictObject({
  paymentMethod: z.enum(PAYMENT_METHODS),
  successUrl: redirectUrl,
  cancelUrl: redirectUrl,
});

/** spec §4.1 submit-for-review body (Set A): empty for card/ACH, a method for wire or check. */
export const SubmitForReviewBody = z.strictObject({ paymentMethod: z.enum(OFFLINE_PAYMENT_METHODS).optional() });

/** Staff commands the spec leaves unshown (docs/decisions/0009-staff-operations.md). */
export const ReasonBody = z.strictObject({ reason: shownText(2000) });
/** The investor's answer to an information request (docs/decisions/0277-answering-an-information-request.md). */
export const ProvideInfoBody = z.strictObject({
  message: shownText(4000),
  /** Ids or URLs of documents the investor already shared elsewhere; stored as given, never fetched. */
  documentReferences: z.array(shownText(500)).max(20).default([]),
});
export const ReconcileBody = z.strictObject({
  referenceCode: z.string().trim().min(1).max(40),
  amount: z
    .string()
    .refine(isDecimalAmount, 'amount must be a decimal string in the subscription\'s currency, e.g. "1250.00"'),
});

/** docs/decisions/0284-refunds.md: no amount refunds everything left to refund. */
export const RefundBody = z.strictObject({
  amount: z
    .string()
    .refine(isDecimalAmount, 'amount must be a decimal string in the subscription\'s currency, e.g. "100.00"')
    .optional()
    .describe('How much to refund; absent: everything still refundable'),
  reason: shownText(2000).describe('Why, for the record and the audit trail'),
});

export const ListSubscriptionsQuery = z.strictObject({
  status: z.string().optional(),
  offering_id: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(200).optional(),
});

export const IdempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII only');

/** A page of subscriptions, newest first; `next_cursor` is null on the last page. */
export const SubscriptionList = z
  .object({ items: z.array(SubscriptionViewSchema), next_cursor: z.string().nullable() })
  .meta({ id: 'SubscriptionList' });

// ---- Staff reads behind the operator console (review-routes.ts) ----
const timestamp = z.iso.datetime({ offset: true });
export const ReviewQueue = z
  .object({
    items: z
      .array(
        z.object({
          subscription: SubscriptionViewSchema,
          investor_id: z.string(),
          kyc_status: z.string().describe("The investor's identity verification, or none"),
          accreditation_status: z.string().describe("The investor's latest accreditation, or none"),
          accreditation_self_reported: z
            .string()
            .nullable()
            .describe(
              'What the investor declared at creation; "[erased]" once the investor was erased (docs/decisions/0381)',
            ),
          review_since: timestamp,
          waiting_seconds: z.number().int().min(0),
        }),
      )
      .describe('Subscriptions waiting on review, longest-waiting first'),
    next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
  })
  .meta({ id: 'ReviewQueue' });
export const SubscriptionActivity = z
  .object({
    events: z
      .array(
        z.object({
          id: z.uuid(),
          type: z.string(),
          occurred_at: timestamp,
          status: z.string().nullable(),
          payment_status: z.string().nullable(),
          reason: z.string().nullable(),
          message: z.string().nullable(),
        }),
      )
      .describe('The events the subscription published, in publish order'),
    deliveries: z
      .array(DeliveryView.extend({ endpoint_url: z.string() }))
      .describe('Their webhook deliveries, oldest first'),
  })
  .meta({ id: 'SubscriptionActivity' });
export const AttentionList = z
  .object({
    items: z
      .array(
        z.object({
          subscription_id: z.uuid(),
          status: z
            .string()
            .nullable()
            .describe('The status last recorded; null when even its first record was refused'),
          step: z
            .string()
            .describe('The step that failed: recordTransition (the projection), collectPayment, closeSessions, …'),
          failure: z
            .string()
            .describe(
              'DATA_REFUSED or CONSTRAINT_REFUSED: PostgreSQL refused it for good, nothing changed; RETRYING: it keeps failing and is still retried',
            ),
          sqlstate: z.string().nullable().describe("PostgreSQL's SQLSTATE, when the database answered"),
          constraint: z.string().nullable().describe('The constraint PostgreSQL named, if any'),
          failed_attempts: z.number().int().min(1),
          first_failed_at: timestamp,
          last_failed_at: timestamp,
        }),
      )
      .describe('Subscriptions whose last step failed, most recently failed first'),
    next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
  })
  .meta({ id: 'AttentionList' });

/** A subscription's refund intents (docs/decisions/0374-refund-intents.md), oldest first. */
export const RefundIntents = z
  .object({
    items: z.array(
      z.object({
        id: z.uuid(),
        payment: z.string().describe("The processor's payment the refund takes from"),
        amount: z.string().describe('Decimal string in the currency'),
        currency: z.string(),
        status: z
          .enum(REFUND_INTENT_STATUSES)
          .describe(
            'requested: recorded before the processor was called, outcome not known yet (see failure); succeeded: refunded; failed: the processor refused, nothing moved',
          ),
        processor_key: z.string().describe('The idempotency key the processor was called under'),
        processor_refund_id: z.string().nullable(),
        request_key: z.string().nullable().describe("The staff request's Idempotency-Key"),
        requested_by: z.string(),
        reason: z.string(),
        failure: z.string().nullable(),
        requested_at: timestamp,
        settled_at: timestamp.nullable(),
      }),
    ),
  })
  .meta({ id: 'RefundIntents' });
