import { z } from 'zod';
import { isDecimalMoney, parseMoney } from '../../lib/money';

// abort: the positivity check below must not run on text that is not money at all.
const money = z.string().refine(isDecimalMoney, { message: 'a decimal string with at most two places, e.g. "12.50"', abort: true });
const positiveMoney = money.refine((v) => parseMoney(v) > 0n, 'must be greater than 0');

export const CreateOfferingBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  /** ISO 4217, upper case. */
  currency: z.string().regex(/^[A-Z]{3}$/, 'a three-letter ISO 4217 code such as USD'),
  status: z.enum(['open', 'closed']).default('open'),
});
export const UpdateOfferingBody = z.strictObject({ status: z.enum(['open', 'closed']) });
export const CreateSecurityClassBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  pricePerUnit: positiveMoney,
});
export const CreateTrancheBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  /** Overrides the security class price for subscriptions in this tranche. */
  pricePerUnit: positiveMoney.optional(),
  status: z.enum(['open', 'closed']).default('open'),
});
