import type { Offering } from '../../db/entities/offering';
import type { SecurityClass } from '../../db/entities/security-class';
import type { Tranche } from '../../db/entities/tranche';
import { formatAmount, normaliseAmount, parseAmount } from '../../lib/money';

/** Capacity as the API shows it (docs/decisions/0278-offering-capacity-reservations.md). */
function capacityView(
  b: { maxAmount?: string | null; minInvestment?: string | null; committedAmount?: string },
  currency: string,
) {
  const committed = parseAmount(b.committedAmount ?? '0', currency, 'total');
  const max = b.maxAmount === null || b.maxAmount === undefined ? null : parseAmount(b.maxAmount, currency, 'total');
  return {
    max_amount: max === null ? null : formatAmount(max, currency),
    min_investment:
      b.minInvestment === null || b.minInvestment === undefined ? null : normaliseAmount(b.minInvestment, currency),
    committed_amount: formatAmount(committed, currency),
    remaining_amount: max === null ? null : formatAmount(max > committed ? max - committed : 0n, currency),
  };
}

export const securityClassView = (c: SecurityClass, currency: string) => ({
  id: c.id,
  offering_id: c.offeringId,
  name: c.name,
  price_per_unit: normaliseAmount(c.pricePerUnit, currency),
  ...capacityView(c, currency),
  created_at: c.createdAt.toISOString(),
});

export const trancheView = (t: Tranche, currency: string) => ({
  id: t.id,
  offering_id: t.offeringId,
  name: t.name,
  price_per_unit: t.pricePerUnit === null ? null : normaliseAmount(t.pricePerUnit, currency),
  status: t.status,
  created_at: t.createdAt.toISOString(),
});

export const offeringView = (o: Offering, classes: SecurityClass[] = [], tranches: Tranche[] = []) => ({
  id: o.id,
  org_id: o.orgId,
  name: o.name,
  currency: o.currency,
  status: o.status,
  raised_amount: normaliseAmount(o.raisedAmount, o.currency, 'total'),
  investor_count: o.investorCount,
  ...capacityView(o, o.currency),
  max_per_investor:
    o.maxPerInvestor === null || o.maxPerInvestor === undefined ? null : normaliseAmount(o.maxPerInvestor, o.currency),
  security_classes: classes.map((c) => securityClassView(c, o.currency)),
  tranches: tranches.map((t) => trancheView(t, o.currency)),
  created_at: o.createdAt.toISOString(),
  updated_at: o.updatedAt.toISOString(),
});
