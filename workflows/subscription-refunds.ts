/**
 * Money going back (docs/decisions/0284-refunds.md, 0285-dispute-outcomes.md): what was taken per
 * payment, what staff may refund, and refunds and dispute outcomes as the processor reports them.
 * Pure functions of the state, like workflows/subscription-transitions.ts; amounts are decimal
 * strings compared as integers (lib/decimal-amount.ts), never floats.
 */
import { refusal } from '../domain/refusal';
import { CLOSES_SESSIONS, type PaymentStatus, type Receipt, type SubscriptionState } from '../domain/subscription';
import type { PaymentNotification, RefundInput } from '../domain/subscription-messages';
import { CAPTURED, money, moneyTotals, receiptsOf, scaled, sum } from '../domain/receipts';
import { scaledAmount } from '../lib/decimal-amount';
import { change, paymentEvent, unchanged, type Change } from './subscription-change';

const left = (r: Receipt): bigint => scaled(r.amount) - scaled(r.refunded);

/** The payment a notification is about: the processor's payment, else its reference. */
const paymentKey = (n: PaymentNotification): string | null => n.payment ?? n.reference ?? null;

/** The receipts with one more payment (once: a payment told twice is one receipt). */
export function withReceipt(
  s: SubscriptionState,
  n: PaymentNotification,
  held: boolean,
): Pick<SubscriptionState, 'receipts'> {
  const payment = paymentKey(n);
  const receipts = receiptsOf(s);
  if (!payment || receipts.some((r) => r.payment === payment)) return { receipts };
  const amount = money(
    s,
    n.amount !== null && scaledAmount(n.amount) !== null ? scaled(n.amount) : scaled(s.totalAmount),
  );
  return { receipts: [...receipts, { payment, amount, refunded: money(s, 0n), held }] };
}

/**
 * Staff may refund a held payment at any time, and the subscription's own payment once the
 * subscription ended unfulfilled (cancelled, rejected, voided). A completed subscription's payment
 * bought its shares: it is not refunded (docs/decisions/0284-refunds.md). Nothing under dispute.
 */
function refundable(s: SubscriptionState): Receipt[] {
  return receiptsOf(s).filter((r) => !r.disputed && left(r) > 0n && (r.held || CLOSES_SESSIONS.includes(s.status)));
}

export interface RefundSlice {
  payment: string;
  amount: string;
}

/** The processor refunds a refund request becomes (held payments first), or the refusal. */
export function planRefund(s: SubscriptionState, input: Pick<RefundInput, 'amount'>): RefundSlice[] {
  const open = refundable(s);
  const available = sum(open.map(left));
  const totals = moneyTotals(s) ?? { received: money(s, 0n), refunded: money(s, 0n) };
  const details = {
    status: s.status,
    payment_status: s.paymentStatus,
    amount_received: totals.received,
    amount_refunded: totals.refunded,
  };
  if (available === 0n) {
    const own = receiptsOf(s).find((r) => !r.held && left(r) > 0n);
    if (own && !own.disputed) {
      throw refusal(
        409,
        'REFUND_NOT_ALLOWED',
        s.status === 'completed'
          ? "A completed subscription's payment bought its shares and is not refunded"
          : `Reject or void the subscription before refunding its payment; it is ${s.status}`,
        details,
      );
    }
    throw refusal(
      409,
      'NOTHING_TO_REFUND',
      'No payment of this subscription is left to refund (none taken, all refunded, or under dispute)',
      details,
    );
  }
  const wanted = input.amount === undefined ? available : scaledAmount(input.amount);
  if (wanted === null || wanted <= 0n) {
    throw refusal(422, 'INVALID_AMOUNT', `amount must be a positive decimal string in ${s.currency}`, {
      amount: input.amount,
    });
  }
  if (wanted > available) {
    throw refusal(
      422,
      'REFUND_EXCEEDS_REFUNDABLE',
      `Cannot refund ${input.amount} ${s.currency}: at most ${money(s, available)} ${s.currency} is left to refund`,
      { ...details, requested: input.amount, refundable: money(s, available) },
    );
  }
  const slices: RefundSlice[] = [];
  let rest = wanted;
  for (const r of [...open.filter((o) => o.held), ...open.filter((o) => !o.held)]) {
    if (rest === 0n) break;
    const take = left(r) < rest ? left(r) : rest;
    slices.push({ payment: r.payment, amount: money(s, take) });
    rest -= take;
  }
  return slices;
}

/** The state with `amount` more gone back from `payment`; the own payment wholly gone is `refunded`. */
function refundedFrom(s: SubscriptionState, payment: string, total: bigint): Partial<SubscriptionState> {
  const receipts = receiptsOf(s).map((r) =>
    r.payment === payment ? { ...r, refunded: money(s, total < scaled(r.amount) ? total : scaled(r.amount)) } : r,
  );
  const own = receipts.find((r) => r.payment === payment && !r.held);
  return own && left(own) === 0n ? { receipts, paymentStatus: 'refunded' } : { receipts };
}

/** Refunds the processor accepted at staff's request, recorded with one internal event each. */
export function refundedByStaff(
  s: SubscriptionState,
  done: (RefundSlice & { refundId: string })[],
  input: RefundInput,
): Change {
  let state: SubscriptionState = { ...s, refundsRequested: (s.refundsRequested ?? 0) + 1 };
  const events = [];
  for (const d of done) {
    const r = receiptsOf(state).find((x) => x.payment === d.payment)!;
    state = { ...state, ...refundedFrom(state, d.payment, scaled(r.refunded) + scaled(d.amount)) };
    events.push({
      type: 'payment.refunded',
      data: {
        subscription_id: s.id,
        status: s.status,
        amount: d.amount,
        payment: d.payment,
        reference: d.refundId,
        reason: input.reason,
        refunded_by: input.actorId,
        amount_refunded: moneyTotals(state)!.refunded,
        amount_received: moneyTotals(state)!.received,
      },
    });
  }
  return { state, events };
}

/**
 * A processor's refund: its amount is the payment's whole refunded amount so far, so a refund told
 * twice, or told after staff recorded it, changes nothing (docs/decisions/0284-refunds.md).
 */
export function applyRefund(s: SubscriptionState, n: PaymentNotification): Change | undefined {
  const key = paymentKey(n);
  const r = receiptsOf(s).find((x) => x.payment === key);
  if (!r) {
    // A payment not (yet) taken: its success may still be on its way, so wait for it. States from
    // before receipts were kept, or a notification naming no payment: the old rule.
    if (s.receipts && key) return undefined;
    if (!CAPTURED.includes(s.paymentStatus)) return undefined;
    if (s.paymentStatus === 'refunded') return unchanged(s);
    return change(s, { paymentStatus: 'refunded' }, paymentEvent('payment.refunded', s, n));
  }
  const told = n.amount !== null && scaledAmount(n.amount) !== null ? scaled(n.amount) : scaled(r.amount);
  if (told <= scaled(r.refunded)) return unchanged(s);
  const patch = refundedFrom(s, r.payment, told);
  const next = { ...s, ...patch };
  return change(
    s,
    patch,
    paymentEvent('payment.refunded', s, n, undefined, {
      payment: r.payment,
      partial: left(receiptsOf(next).find((x) => x.payment === r.payment)!) > 0n,
      amount_refunded: moneyTotals(next)!.refunded,
      amount_received: moneyTotals(next)!.received,
    }),
  );
}

const withDisputed = (s: SubscriptionState, payment: string | undefined, disputed: boolean): Receipt[] | undefined =>
  s.receipts || payment ? receiptsOf(s).map((r) => (r.payment === payment ? { ...r, disputed } : r)) : undefined;

/** What the payment status was before the dispute (states from before it was kept: what it must have been). */
const beforeDispute = (s: SubscriptionState): PaymentStatus =>
  s.statusBeforeDispute ?? (s.set === 'A' && s.status === 'completed' ? 'in_escrow' : 'received');

/**
 * A dispute opened, won or lost (docs/decisions/0285-dispute-outcomes.md). Opened: the payment is
 * `disputed` (a held payment is marked, the subscription's status stays). Won: the status it had
 * before comes back. Lost: the disputed amount went back to the payer, recorded like a refund.
 * An outcome told before its dispute waits for it.
 */
export function applyDispute(s: SubscriptionState, n: PaymentNotification): Change | undefined {
  const key = paymentKey(n);
  const r = receiptsOf(s).find((x) => x.payment === key);
  if (!r && s.receipts && key) return undefined; // a payment not (yet) taken: wait for it, as applyRefund
  if (n.kind === 'disputed') {
    if (r?.held) {
      if (r.disputed) return unchanged(s);
      return change(
        s,
        { receipts: withDisputed(s, r.payment, true) },
        paymentEvent('payment.disputed', s, n, undefined, { payment: r.payment }),
      );
    }
    if (!CAPTURED.includes(s.paymentStatus)) return undefined;
    if (s.paymentStatus === 'disputed') return unchanged(s);
    const receipts = r ? withDisputed(s, r.payment, true) : s.receipts;
    return change(
      s,
      { paymentStatus: 'disputed', statusBeforeDispute: s.paymentStatus, ...(receipts ? { receipts } : {}) },
      paymentEvent('payment.disputed', s, n),
    );
  }
  const open = r?.held ? r.disputed === true : s.paymentStatus === 'disputed';
  if (!open) return undefined;
  const type = n.kind === 'dispute_won' ? 'payment.dispute_won' : 'payment.dispute_lost';
  let patch: Partial<SubscriptionState> = r ? { receipts: withDisputed(s, r.payment, false) } : {};
  if (!r?.held) patch = { ...patch, paymentStatus: beforeDispute(s), statusBeforeDispute: null };
  if (n.kind === 'dispute_lost') {
    const mid = { ...s, ...patch };
    const lost =
      n.amount !== null && scaledAmount(n.amount) !== null ? scaled(n.amount) : r ? left(r) : scaled(s.totalAmount);
    patch = r
      ? { ...patch, ...refundedFrom(mid, r.payment, scaled(r.refunded) + lost) }
      : { ...patch, paymentStatus: 'refunded' };
  }
  const next = { ...s, ...patch };
  const totals = moneyTotals(next);
  return change(
    s,
    patch,
    paymentEvent(type, s, n, undefined, {
      ...(r ? { payment: r.payment } : {}),
      ...(totals ? { amount_refunded: totals.refunded, amount_received: totals.received } : {}),
    }),
  );
}
