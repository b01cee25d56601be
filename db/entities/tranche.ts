import { EntitySchema } from '@mikro-orm/core';

/** A slice of an offering (spec: optional trancheId on create); it may override the class price. */
export interface Tranche {
  id: string;
  offeringId: string;
  name: string;
  pricePerUnit: string | null;
  status: 'open' | 'closed';
  createdAt: Date;
}

export const TrancheSchema = new EntitySchema<Tranche>({
  name: 'Tranche',
  tableName: 'tranches',
  properties: {
    id: { type: 'uuid', primary: true },
    offeringId: { type: 'uuid', index: true },
    name: { type: 'string' },
    pricePerUnit: { type: 'decimal', precision: 19, scale: 4, nullable: true },
    status: { type: 'string' },
    createdAt: { type: 'Date' },
  },
});
