import type { Orm } from '../db/orm';
import { PaymentReferenceSchema } from '../db/entities/payment-reference';

/**
 * Which subscription a processor object belongs to, for notifications about objects that carry
 * none of our metadata (a Stripe refund names only its charge's PaymentIntent).
 */
export function paymentReferences(orm: Orm, processor: string) {
  return {
    async remember(reference: string, subscriptionId: string): Promise<void> {
      await orm.em
        .getConnection()
        .getKnex()('payment_references')
        .insert({ processor, reference, subscription_id: subscriptionId })
        .onConflict(['processor', 'reference'])
        .ignore();
    },
    /**
     * The references of one subscription that start with `prefix` (e.g. Stripe's `cs_` sessions)
     * and are not closed yet: each is closed once, so a subscription's Nth session costs one call.
     */
    async openOf(subscriptionId: string, prefix: string): Promise<string[]> {
      const rows = await orm.em.fork().find(PaymentReferenceSchema, {
        processor,
        subscriptionId,
        reference: { $like: `${prefix}%` },
        closedAt: null,
      });
      return rows.map((r) => r.reference);
    },
    /** The processor will take no payment through this reference any more (expired or finished). */
    async close(reference: string): Promise<void> {
      await orm.em.fork().nativeUpdate(PaymentReferenceSchema, { processor, reference }, { closedAt: new Date() });
    },
    async subscriptionOf(reference: string): Promise<string | null> {
      const row = await orm.em.fork().findOne(PaymentReferenceSchema, { processor, reference });
      return row?.subscriptionId ?? null;
    },
  };
}

export type PaymentReferences = ReturnType<typeof paymentReferences>;
