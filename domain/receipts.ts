/**
 * What was taken for a subscription, payment by payment, and what went back
 * (docs/decisions/0284-refunds.md). Pure: the workflow, the projection and the view read it.
 */
import { formatScaled, scaledAmount } from '../lib/decimal-amount';
import type { PaymentStatus, Receipt, SubscriptionState } from './subscription';

export const scaled = (text: string): bigint => scaledAmount(text) ?? 0n;
/** An amount in ten-thousandths, written with the places of the subscription's currency. */
export const money = (s: Pick<SubscriptionState, 'totalAmount'>, x: bigint): string => formatScaled(x, s.totalAmount);
export const sum = (xs: bigint[]): bigint => xs.reduce((a, b) => a + b, 0n);

/** Money has moved: a late `failed` or `succeeded` changes nothing, a refund or dispute may follow. */
export const CAPTURED: readonly PaymentStatus[] = ['received', 'in_escrow', 'refunded', 'disputed'];

/**
 * Every payment taken. A state from before receipts were kept knows only the payment that paid
 * the total (and nothing of held ones' amounts): that payment, for the whole total.
 */
export function receiptsOf(s: SubscriptionState): Receipt[] {
  if (s.receipts) return s.receipts;
  if (!s.paidWith || !CAPTURED.includes(s.paymentStatus)) return [];
  const refunded = s.paymentStatus === 'refunded' ? s.totalAmount : money(s, 0n);
  return [
    { payment: s.paidWith, amount: s.totalAmount, refunded, held: false, disputed: s.paymentStatus === 'disputed' },
  ];
}

/** What was taken and what went back, over every payment: the view's amount_received and amount_refunded. */
export function moneyTotals(s: SubscriptionState): { received: string; refunded: string } | null {
  const receipts = receiptsOf(s);
  if (receipts.length === 0) return null;
  return {
    received: money(s, sum(receipts.map((r) => scaled(r.amount)))),
    refunded: money(s, sum(receipts.map((r) => scaled(r.refunded)))),
  };
}

/**
 * What of the subscription's own payment still counts (the offering's raised amount): what it paid
 * minus what went back of it. Held payments never count.
 */
export function countedAmount(s: SubscriptionState): string {
  const own = receiptsOf(s).filter((r) => !r.held);
  if (own.length === 0) return s.paymentStatus === 'refunded' ? money(s, 0n) : s.totalAmount;
  const back = sum(own.map((r) => scaled(r.refunded)));
  const net = scaled(s.totalAmount) - back;
  return money(s, net > 0n ? net : 0n);
}
