import { EntitySchema } from '@mikro-orm/core';

export interface SecurityClass {
  id: string;
  offeringId: string;
  name: string;
  /** Money as a decimal string, exact in the offering's currency (lib/money.ts). */
  pricePerUnit: string;
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
    createdAt: { type: 'Date' },
  },
});
