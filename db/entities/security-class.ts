import { EntitySchema } from '@mikro-orm/core';

export interface SecurityClass {
  id: string;
  offeringId: string;
  name: string;
  /** Money as a decimal string, exact in the offering's currency (lib/money.ts). */
  pricePerUnit: string;
  /** Capacity (docs/decisions/0278-offering-capacity-reservations.md): null sets no bound. Decimal strings. */
  maxAmount?: string | null;
  minInvestment?: string | null;
  /** What subscriptions not cancelled, rejected or voided hold; moved only by db/offering-capacity.ts. */
  committedAmount?: string;
  createdAt: Date;
}

export const SecurityClassSchema = new EntitySchema<SecurityClass>({
  name: 'SecurityClass',
  tableName: 'security_classes',
  properties: {
    id: { type: 'uuid', primary: true },
    offeringId: { type: 'uuid', index: true },
    name: { type: 'string' },
    pricePerUnit: { type: 'decimal', precision: 19, scale: 4 },
    maxAmount: { type: 'decimal', precision: 39, scale: 4, nullable: true },
    minInvestment: { type: 'decimal', precision: 19, scale: 4, nullable: true },
    committedAmount: { type: 'decimal', precision: 39, scale: 4, default: '0' },
    createdAt: { type: 'Date' },
  },
});
