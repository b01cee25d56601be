import { EntitySchema } from '@mikro-orm/core';
import type { SubscriptionState } from '../../domain/subscription';

/**
 * The PostgreSQL projection of a subscription workflow: the columns people list and search by,
 * and the whole state. Written only by the workflow's projection activity.
 */
export interface SubscriptionRecord {
  id: string;
  orgId: string;
  offeringId: string;
  investorId: string;
  status: string;
  paymentStatus: string;
  referenceCode: string | null;
  /** Idempotency-Key of the create request, and a hash of its body. */
  idempotencyKey: string | null;
  requestHash: string | null;
  state: SubscriptionState;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export const SubscriptionRecordSchema = new EntitySchema<SubscriptionRecord>({
  name: 'SubscriptionRecord',
  tableName: 'subscriptions',
  properties: {
    id: { type: 'uuid', primary: true },
    orgId: { type: 'uuid' },
    offeringId: { type: 'uuid' },
    investorId: { type: 'string' },
    status: { type: 'string' },
    paymentStatus: { type: 'string' },
    referenceCode: { type: 'string', nullable: true },
    idempotencyKey: { type: 'string', nullable: true },
    requestHash: { type: 'string', nullable: true },
    state: { type: 'json' },
    version: { type: 'integer' },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
  },
});
