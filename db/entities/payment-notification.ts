import { EntitySchema } from '@mikro-orm/core';

/** A processor notification already taken: the idempotency record, by the processor's event id. */
export interface PaymentNotificationRecord {
  processor: string;
  eventId: string;
  eventType: string;
  subscriptionId: string | null;
  /** signalled: sent to the subscription workflow; ignored: acknowledged only (unknown type or subscription). */
  outcome: 'signalled' | 'ignored';
  receivedAt: Date;
}

export const PaymentNotificationSchema = new EntitySchema<PaymentNotificationRecord>({
  name: 'PaymentNotificationRecord',
  tableName: 'payment_notifications',
  properties: {
    processor: { type: 'string', primary: true },
    eventId: { type: 'string', primary: true },
    eventType: { type: 'string' },
    subscriptionId: { type: 'uuid', nullable: true },
    outcome: { type: 'string' },
    receivedAt: { type: 'Date', onCreate: () => new Date() },
  },
});
