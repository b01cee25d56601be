/**
 * The payment processor's notifications applied to a subscription (spec §3's payment states): pure
 * functions of the state, like workflows/subscription-transitions.ts. Refunds and disputes are
 * workflows/subscription-refunds.ts; amounts compare as integers, never floats.
 */
import { CLOSES_SESSIONS, TERMINAL, type SubscriptionState } from '../domain/subscription';
import { CAPTURED } from '../domain/receipts';
import type { PaymentNotification } from '../domain/subscription-messages';
import { sameAmount } from '../lib/decimal-amount';
import { change, paymentEvent, unchanged, type Change } from './subscription-change';
import { applyDispute, applyRefund, withReceipt } from './subscription-refunds';

/** Set A: funds reached escrow (a collected card or ACH payment, or a reconciled wire or check). */
export function fundsInEscrow(s: SubscriptionState): Change {
  return change(
    s,
    { status: 'completed', paymentStatus: 'in_escrow' },
    { type: 'subscription.funded' },
    { type: 'subscription.completed' },
  );
}

/** The payment a notification is about; unknown for notifications read before it was named. */
const paymentOf = (n: PaymentNotification): string | null => n.payment ?? null;

/**
 * Money captured for a subscription that ended without being fulfilled (cancelled, voided,
 * rejected): recorded as received and held for staff to refund, with an event; never silent.
 */
function held(s: SubscriptionState, n: PaymentNotification): Change {
  if (CAPTURED.includes(s.paymentStatus)) return unchanged(s);
  const reason = `payment arrived after the subscription was ${s.status}; held for staff to refund`;
  return change(
    s,
    { paymentStatus: 'received', statusReason: reason, paidWith: paymentOf(n), ...withReceipt(s, n, false) },
    paymentEvent('payment.held', s, n, reason),
  );
}

/** A payment beyond what is owed, held with its reason; the subscription itself does not move. */
function heldAside(s: SubscriptionState, n: PaymentNotification, reason: string): Change {
  const payment = paymentOf(n);
  return change(
    s,
    { heldPayments: [...(s.heldPayments ?? []), ...(payment ? [payment] : [])], ...withReceipt(s, n, true) },
    paymentEvent('payment.held', s, n, `${reason}; held for staff to refund`),
  );
}

/**
 * Every `succeeded` is compared with what is owed (the `compare` patch; histories from before it
 * replay the old rule): a payment already held, or the one that paid, changes nothing; another
 * payment once the total is paid, or an amount other than the total, is held aside.
 */
function checkedPayment(s: SubscriptionState, n: PaymentNotification): Change | null {
  const payment = paymentOf(n);
  if (payment && s.heldPayments?.includes(payment)) return unchanged(s);
  if (CAPTURED.includes(s.paymentStatus)) {
    if (!payment || !s.paidWith || payment === s.paidWith) return unchanged(s);
    return heldAside(s, n, `a second payment: the total was already paid by ${s.paidWith}`);
  }
  if (CLOSES_SESSIONS.includes(s.status)) return null;
  if (n.amount !== null && !sameAmount(n.amount, s.totalAmount)) {
    return heldAside(s, n, `paid ${n.amount} ${s.currency} but the total is ${s.totalAmount} ${s.currency}`);
  }
  return null;
}

/**
 * A processor notification applied to the state, or `undefined` while the subscription is not
 * ready for it (the workflow keeps it and tries again after the next change). Notifications can
 * arrive twice and out of order; none may undo a later fact. Whether it is ready never depends on
 * `compare`.
 */
export function applyPayment(s: SubscriptionState, n: PaymentNotification, compare = true): Change | undefined {
  switch (n.kind) {
    case 'processing':
      return s.paymentStatus === 'pending' || s.paymentStatus === 'failed'
        ? change(s, { paymentStatus: 'processing' })
        : unchanged(s);
    case 'failed':
      return CAPTURED.includes(s.paymentStatus)
        ? unchanged(s)
        : change(s, { paymentStatus: 'failed', statusReason: n.failureReason ?? null });
    case 'succeeded': {
      const waits =
        !CLOSES_SESSIONS.includes(s.status) &&
        (s.set === 'B' ? s.status === 'draft' || s.status === 'pending_signature' : s.status !== 'approved') &&
        !TERMINAL.includes(s.status);
      if (waits) return undefined;
      if (compare) {
        const checked = checkedPayment(s, n);
        if (checked) return checked;
      }
      if (CLOSES_SESSIONS.includes(s.status)) return held(s, n);
      const paid = { paymentStatus: 'received' as const, paidWith: paymentOf(n), ...withReceipt(s, n, false) };
      if (s.set === 'B' && s.status === 'pending_payment') {
        return change(s, { ...paid, status: 'pending_review', statusReason: null }, { type: 'subscription.funded' });
      }
      // Set B after payment, or Set A's collection after approval (escrow settlement follows).
      if (s.set === 'A' && s.status !== 'approved') return unchanged(s);
      return CAPTURED.includes(s.paymentStatus) ? unchanged(s) : change(s, paid);
    }
    case 'in_escrow':
      if (s.set === 'A' && CLOSES_SESSIONS.includes(s.status)) return held(s, n);
      if (s.set !== 'A' || s.paymentStatus === 'refunded' || s.paymentStatus === 'disputed') return unchanged(s);
      if (s.status === 'approved') return fundsInEscrow(s);
      return TERMINAL.includes(s.status) ? unchanged(s) : undefined;
    // A refund or dispute needs a payment to be about: each waits for it (workflows/subscription-refunds.ts).
    case 'refunded':
      return applyRefund(s, n);
    case 'disputed':
    case 'dispute_won':
    case 'dispute_lost':
      return applyDispute(s, n);
  }
}
