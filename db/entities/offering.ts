import { EntitySchema } from '@mikro-orm/core';

export interface Offering {
  id: string;
  orgId: string;
  name: string;
  currency: string;
  /** open: accepts subscriptions; closed: refuses new ones. */
  status: 'open' | 'closed';
  /** Set A counters, moved when funds reach escrow (spec §3). Money as a decimal string in the offering's currency; a sum, so it may pass maxAmount. */
  raisedAmount: string;
  investorCount: number;
  /** Capacity (docs/decisions/0278-offering-capacity-reservations.md): null sets no bound. Decimal strings. */
  maxAmount?: string | null;
  minInvestment?: string | null;
  /** The most one investor's live subscriptions may hold (docs/decisions/0370-per-investor-cap.md); null: no cap. */
  maxPerInvestor?: string | null;
  /** What subscriptions not cancelled, rejected or voided hold; moved only by db/offering-capacity.ts. */
  committedAmount?: string;
  createdAt: Date;
  updatedAt: Date;
}

export const OfferingSchema = new EntitySchema<Offering>({
  name: 'Offering',
  tableName: 'offerings',
  properties: {
    id: { type: 'uuid', primary: true },
    orgId: { type: 'uuid', index: true },
    name: { type: 'string' },
    currency: { type: 'string', length: 3 },
    status: { type: 'string' },
    raisedAmount: { type: 'decimal', precision: 39, scale: 4 },
    investorCount: { type: 'integer' },
    maxAmount: { type: 'decimal', precision: 39, scale: 4, nullable: true },
    minInvestment: { type: 'decimal', precision: 19, scale: 4, nullable: true },
    maxPerInvestor: { type: 'decimal', precision: 19, scale: 4, nullable: true },
    committedAmount: { type: 'decimal', precision: 39, scale: 4, default: '0' },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
  },
});
