/**
 * What a transition produces (workflows/subscription-transitions.ts, workflows/subscription-payments.ts,
 * workflows/subscription-refunds.ts): the next state and the events it emits. Pure: bundled into
 * workflow code.
 */
import type { ProcessorAudit } from '../domain/events';
import type { SubscriptionState } from '../domain/subscription';
import type { PaymentNotification } from '../domain/subscription-messages';

export interface PendingEvent {
  type: string;
  data?: Record<string, unknown>;
  audit?: ProcessorAudit;
}
export interface Change {
  state: SubscriptionState;
  events: PendingEvent[];
}

export const change = (
  state: SubscriptionState,
  patch: Partial<SubscriptionState>,
  ...events: PendingEvent[]
): Change => ({
  state: { ...state, ...patch },
  events,
});

export const unchanged = (s: SubscriptionState): Change => ({ state: s, events: [] });

/** The audit trail's name for each internal payment event (`<resource>.<verb>`, db/audit-log.ts). */
const PAYMENT_AUDIT_ACTIONS = {
  'payment.held': 'payment.hold',
  'payment.refunded': 'payment.refund',
  'payment.disputed': 'payment.dispute',
  'payment.dispute_won': 'payment.dispute_won',
  'payment.dispute_lost': 'payment.dispute_lost',
} as const;
export type PaymentEventType = keyof typeof PAYMENT_AUDIT_ACTIONS;

/**
 * Internal events (not delivered to webhooks, spec §6.1; docs/decisions/0286-refund-events-internal.md):
 * money that moved at the processor's word, for staff and audit.
 */
export const paymentEvent = (
  type: PaymentEventType,
  s: SubscriptionState,
  n: PaymentNotification,
  reason?: string,
  extra: Record<string, unknown> = {},
): PendingEvent => ({
  type,
  data: {
    subscription_id: s.id,
    status: s.status,
    amount: n.amount,
    reference: n.reference,
    processor_event_id: n.processorEventId,
    ...(reason ? { reason } : {}),
    ...extra,
  },
  audit: {
    action: PAYMENT_AUDIT_ACTIONS[type],
    processor: n.receivedVia?.processor ?? null,
    requestId: n.receivedVia?.requestId ?? null,
    clientAddress: n.receivedVia?.clientAddress ?? null,
    before: { payment_status: s.paymentStatus },
  },
});
