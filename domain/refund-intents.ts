/**
 * A refund intent (docs/decisions/0374-refund-intents.md): one processor refund a staff refund asked
 * for, recorded before the processor is called and settled with what it answered. Shared by the
 * workflow that writes it, the activities and table that keep it, and the API that shows it.
 */
export const REFUND_INTENT_STATUSES = ['requested', 'succeeded', 'failed'] as const;
export type RefundIntentStatus = (typeof REFUND_INTENT_STATUSES)[number];

export interface RefundIntent {
  id: string;
  orgId: string;
  subscriptionId: string;
  /** The processor's payment the refund takes from. */
  payment: string;
  /** Decimal string in the subscription's currency, never a float. */
  amount: string;
  currency: string;
  /** The idempotency key the processor is called under: a retried call is the same refund. */
  processorKey: string;
  /** The staff request's Idempotency-Key, when it carried one. */
  requestKey: string | null;
  requestedBy: string;
  reason: string;
}

/** What the processor answered: its refund, a refusal (nothing moved), or nothing yet (outcome unknown). */
export type RefundIntentOutcome =
  | { id: string; status: 'succeeded'; refundId: string }
  | { id: string; status: 'failed' | 'requested'; failure: string };
