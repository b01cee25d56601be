/**
 * The subscription as the API answers it and as subscription events carry it (spec §2.1): the one
 * schema that types the builder (domain/subscription-view.ts), checks every answer (api/respond.ts)
 * and documents it (api/openapi). Kept apart from the builder so workflow code never bundles zod.
 */
import { z } from 'zod';
import { OFFLINE_PAYMENT_METHODS, PAYMENT_METHODS, PAYMENT_STATUSES, SUBSCRIPTION_STATUSES } from './subscription';

const money = z
  .string()
  .regex(/^-?\d+(\.\d{1,4})?$/)
  .describe('Decimal string with the currency\'s ISO 4217 places: "1250.00" USD, "1000" JPY, "12.500" BHD');
const timestamp = z.iso.datetime({ offset: true });

export const SubscriptionViewSchema = z
  .object({
    id: z.uuid(),
    offering_id: z.uuid(),
    security_class_id: z.uuid(),
    tranche_id: z.uuid().nullable(),
    /** Whose subscription it is: the investor's user id (the access token's `sub`). */
    investor_id: z
      .string()
      .describe("The investor's user id (the access token's sub); also on every subscription event"),
    units_subscribed: z.number().positive().describe('Up to 6 decimals (docs/decisions/0060-fractional-units.md)'),
    price_per_unit: money,
    total_amount: money,
    currency: z.string(),
    payment_method: z.enum([...PAYMENT_METHODS, ...OFFLINE_PAYMENT_METHODS]).nullable(),
    payment_status: z.enum(PAYMENT_STATUSES),
    subscription_agreement_signed: z.boolean(),
    status: z.enum(SUBSCRIPTION_STATUSES),
    signed_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    reference_code: z
      .string()
      .optional()
      .describe('Set A wire or check: quote it with the payment so staff can reconcile'),
    shares_id: z.string().nullable().optional().describe('Set B only: null until shares are issued'),
    shares_issued_at: timestamp.nullable().optional().describe('Set B only: null until shares are issued'),
    status_reason: z
      .string()
      .optional()
      .describe('Why staff rejected, voided or cancelled it; `expired` when it was cancelled unsigned at expires_at'),
    expires_at: timestamp
      .optional()
      .describe(
        'While draft or pending_signature: when it is cancelled as expired unless signed (SUBSCRIPTION_DRAFT_TTL after creation)',
      ),
    info_requested: z.string().optional().describe('What staff asked the investor for, while unanswered'),
    info_requests: z
      .array(
        z.object({
          message: z.string().describe('What staff asked for'),
          requested_at: timestamp,
          answer: z
            .object({
              message: z.string().describe('The investor\'s answer; "[erased]" once the investor was erased'),
              document_references: z
                .array(z.string())
                .describe('Each "[erased]" once the investor was erased (docs/decisions/0313)'),
              answered_at: timestamp,
            })
            .nullable()
            .describe("The investor's answer (provide-info); null while unanswered"),
        }),
      )
      .optional()
      .describe('Every information request and its answer, oldest first; absent when none was made'),
    amount_received: money
      .optional()
      .describe('Once money was taken: every payment received for it, held ones included (docs/decisions/0284)'),
    amount_refunded: money
      .optional()
      .describe(
        'Once money was taken: what went back of it (refunds, lost disputes); equal to amount_received when all did',
      ),
  })
  .meta({ id: 'Subscription' });
export type SubscriptionView = z.infer<typeof SubscriptionViewSchema>;

/** spec §2.5. */
export const PaymentSessionSchema = z
  .object({ session_id: z.string(), session_url: z.url() })
  .meta({ id: 'PaymentSession' });
