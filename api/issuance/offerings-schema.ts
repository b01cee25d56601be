import { z } from 'zod';
import { isDecimalMoney, parseMoney } from '../../lib/money';

const money = z.string().refine(isDecimalMoney, 'a decimal string with at most two places, e.g. "12.50"');

export const CreateOfferingBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  /** ISO 4217, upper case. */
  currency: z.string().regex(/^[A-Z]{3}$/, 'a three-letter ISO 4217 code such as USD'),
  status: z.enum(['open', 'closed']).default('open'),
});
export const UpdateOfferingBody = z.strictObject({ status: z.enum(['open', 'closed']) });
export const CreateSecurityClassBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  pricePerUnit: money.refine((v) => parseMoney(v) > 0n, 'must be greater than 0'),
});
export const CreateTrancheBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  /** Overrides the security class price for subscriptions in this tranche. */
  pricePerUnit: money.refine((v) => parseMoney(v) > 0n, 'must be greater than 0').optional(),
  status: z.enum(['open', 'closed']).default('open'),
});
