import type { Offering } from '../../db/entities/offering';
import type { SecurityClass } from '../../db/entities/security-class';
import type { Tranche } from '../../db/entities/tranche';
import { normaliseMoney } from '../../lib/money';

export const securityClassView = (c: SecurityClass) => ({
  id: c.id,
  offering_id: c.offeringId,
  name: c.name,
  price_per_unit: normaliseMoney(c.pricePerUnit),
  created_at: c.createdAt.toISOString(),
});

export const trancheView = (t: Tranche) => ({
  id: t.id,
  offering_id: t.offeringId,
  name: t.name,
  price_per_unit: t.pricePerUnit === null ? null : normaliseMoney(t.pricePerUnit),
  status: t.status,
  created_at: t.createdAt.toISOString(),
});

export const offeringView = (o: Offering, classes: SecurityClass[] = [], tranches: Tranche[] = []) => ({
  id: o.id,
  org_id: o.orgId,
  name: o.name,
  currency: o.currency,
  status: o.status,
  raised_amount: normaliseMoney(o.raisedAmount, 'total'),
  investor_count: o.investorCount,
  security_classes: classes.map(securityClassView),
  tranches: tranches.map(trancheView),
  created_at: o.createdAt.toISOString(),
  updated_at: o.updatedAt.toISOString(),
});
