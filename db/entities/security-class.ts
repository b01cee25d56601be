import { EntitySchema } from '@mikro-orm/core';

export interface SecurityClass {
  id: string;
  offeringId: string;
  name: string;
  /** Money as a two-decimal string. */
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
    pricePerUnit: { type: 'decimal', precision: 18, scale: 2 },
    createdAt: { type: 'Date' },
  },
});
