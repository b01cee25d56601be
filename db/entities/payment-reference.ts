import { EntitySchema } from '@mikro-orm/core';

/**
 * A processor object (Stripe session, PaymentIntent) and the subscription it belongs to, for
 * notifications whose object carries no metadata of ours (refunds, disputes).
 */
export interface PaymentReference {
  processor: string;
  reference: string;
  subscriptionId: string;
  createdAt: Date;
  /** Sessions only: when it stopped taking payments (expired, or found finished); null while open. */
  closedAt: Date | null;
}

export const PaymentReferenceSchema = new EntitySchema<PaymentReference>({
  name: 'PaymentReference',
  tableName: 'payment_references',
  properties: {
    processor: { type: 'string', primary: true },
    reference: { type: 'string', primary: true },
    subscriptionId: { type: 'uuid' },
    createdAt: { type: 'Date', onCreate: () => new Date() },
    closedAt: { type: 'Date', nullable: true },
  },
});
