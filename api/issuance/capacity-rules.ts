import type { Offering } from '../../db/entities/offering';
import type { SecurityClass } from '../../db/entities/security-class';
import { holdCommitment, type Commitment } from '../../db/offering-capacity';
import type { Orm } from '../../db/orm';
import { AppError, conflict } from '../../lib/errors';
import { formatAmount, parseAmount, type Minor } from '../../lib/money';

/**
 * The two capacity rules a create must pass (docs/decisions/0278-offering-capacity-reservations.md):
 * at least the minimum investment of the security class and of the offering, and within what is
 * still available under each maximum.
 */
export function requireMinimum(offering: Offering, cls: SecurityClass, total: Minor): void {
  const { currency } = offering;
  for (const min of [cls.minInvestment, offering.minInvestment]) {
    if (min === null || min === undefined) continue;
    const minimum = parseAmount(min, currency, 'total');
    if (total < minimum) {
      throw new AppError(
        422,
        'BELOW_MINIMUM_INVESTMENT',
        `The total ${formatAmount(total, currency)} ${currency} is below the minimum investment of ${formatAmount(minimum, currency)} ${currency}`,
        { minimum_investment: formatAmount(minimum, currency), total_amount: formatAmount(total, currency), currency },
      );
    }
  }
}

/**
 * Holds the subscription's total against the class and the offering, or refuses with 409
 * OFFERING_FULL, or 409 INVESTOR_LIMIT_REACHED past the offering's cap per investor
 * (docs/decisions/0370-per-investor-cap.md).
 */
export async function reserveCapacity(orm: Orm, c: Commitment, currency: string): Promise<void> {
  const shortfall = await holdCommitment(orm.em.getConnection().getKnex(), c);
  if (!shortfall) return;
  const max = parseAmount(shortfall.maxAmount, currency, 'total');
  const committed = parseAmount(shortfall.committedAmount, currency, 'total');
  const available = max > committed ? max - committed : 0n;
  if (shortfall.bound === 'investor') {
    throw conflict(
      'INVESTOR_LIMIT_REACHED',
      `This offering takes at most ${formatAmount(max, currency)} ${currency} from one investor; your subscriptions not cancelled, rejected or voided hold ${formatAmount(committed, currency)} ${currency}, so ${formatAmount(available, currency)} ${currency} is left for this one of ${c.amount} ${currency}`,
      {
        bound: 'investor',
        max_per_investor: formatAmount(max, currency),
        held_by_investor: formatAmount(committed, currency),
        available_amount: formatAmount(available, currency),
        requested_amount: c.amount,
        currency,
      },
    );
  }
  const what = shortfall.bound === 'offering' ? 'offering' : 'security class';
  throw conflict(
    'OFFERING_FULL',
    `The ${what} has ${formatAmount(available, currency)} ${currency} left; this subscription's total of ${c.amount} ${currency} would pass its maximum`,
    {
      bound: shortfall.bound,
      available_amount: formatAmount(available, currency),
      max_amount: formatAmount(max, currency),
      requested_amount: c.amount,
      currency,
    },
  );
}
