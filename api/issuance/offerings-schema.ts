import { z } from 'zod';
import { currencyExponent, isDecimalAmount } from '../../lib/money';
import { shownText } from '../../lib/shown-text';

// abort: the positivity check below must not run on text that is not money at all. Whether the
// places fit the offering's currency is checked where the offering is known (offerings-router).
const money = z.string().refine(isDecimalAmount, {
  message: 'a decimal string in the offering\'s currency, e.g. "12.50" (USD) or "1000" (JPY)',
  abort: true,
});
const positiveMoney = money.refine((v) => /[1-9]/.test(v), 'must be greater than 0');

const timestamp = z.iso.datetime({ offset: true });

/** Optional capacity of an offering or a security class, in the offering's currency. */
const bounds = {
  maxAmount: positiveMoney.optional().describe('The most all subscriptions together may commit'),
  minInvestment: positiveMoney.optional().describe("The least one subscription's total may be"),
};

/** docs/decisions/0278-offering-capacity-reservations.md */
const capacity = {
  max_amount: z.string().nullable().describe('The most subscriptions may commit in all; null: no maximum'),
  min_investment: z.string().nullable().describe("The least one subscription's total may be; null: no minimum"),
  committed_amount: z.string().describe('What subscriptions not cancelled, rejected or voided hold'),
  remaining_amount: z.string().nullable().describe('max_amount less committed_amount; null without a maximum'),
};
export const SecurityClassView = z
  .object({
    id: z.uuid(),
    offering_id: z.uuid(),
    name: z.string(),
    price_per_unit: z.string(),
    ...capacity,
    created_at: timestamp,
  })
  .meta({ id: 'SecurityClass' });
export const TrancheView = z
  .object({
    id: z.uuid(),
    offering_id: z.uuid(),
    name: z.string(),
    price_per_unit: z.string().nullable().describe('null: the security class price applies'),
    status: z.enum(['open', 'closed']),
    created_at: timestamp,
  })
  .meta({ id: 'Tranche' });
export const OfferingView = z
  .object({
    id: z.uuid(),
    org_id: z.uuid(),
    name: z.string(),
    currency: z.string(),
    status: z.enum(['open', 'closed']),
    raised_amount: z.string(),
    investor_count: z.number().int(),
    ...capacity,
    max_per_investor: z
      .string()
      .nullable()
      .describe("The most one investor's live subscriptions may hold together; null: no cap (docs/decisions/0370)"),
    security_classes: z.array(SecurityClassView).describe('Filled on GET of one offering; empty elsewhere'),
    tranches: z.array(TrancheView).describe('Filled on GET of one offering; empty elsewhere'),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Offering' });

export const ListOfferingsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(200).optional(),
});
/** A page of offerings, newest first; `next_cursor` is null on the last page. */
export const OfferingList = z
  .object({ items: z.array(OfferingView), next_cursor: z.string().nullable() })
  .meta({ id: 'OfferingList' });

export const CreateOfferingBody = z.strictObject({
  name: shownText(200),
  /** ISO 4217, upper case. */
  currency: z
    .string()
    .refine((c) => /^[A-Z]{3}$/.test(c) && currencyExponent(c) !== null, 'an ISO 4217 currency code such as USD'),
  status: z.enum(['open', 'closed']).default('open'),
  ...bounds,
  maxPerInvestor: positiveMoney
    .optional()
    .describe("The most one investor's subscriptions not cancelled, rejected or voided may hold together"),
});
export const UpdateOfferingBody = z
  .strictObject({
    status: z.enum(['open', 'closed']).optional(),
    maxAmount: positiveMoney.nullable().optional().describe('null removes the maximum'),
    minInvestment: positiveMoney.nullable().optional().describe('null removes the minimum'),
    maxPerInvestor: positiveMoney.nullable().optional().describe('null removes the cap per investor'),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one of status, maxAmount, minInvestment, maxPerInvestor');
export const CreateSecurityClassBody = z.strictObject({
  name: shownText(200),
  pricePerUnit: positiveMoney,
  ...bounds,
});
export const CreateTrancheBody = z.strictObject({
  name: shownText(200),
  /** Overrides the security class price for subscriptions in this tranche. */
  pricePerUnit: positiveMoney.optional(),
  status: z.enum(['open', 'closed']).default('open'),
});
