/**
 * A staff refund sent to the processor through its intents (docs/decisions/0374-refund-intents.md): each
 * processor refund is recorded `requested` before it is sent, under a key of its own that names it at the
 * processor, and settled with the answer after (`succeeded` with the refund's id, `failed` on a refusal),
 * so no refund leaves the processor without a record in PostgreSQL, whatever fails next. A worker that
 * dies after the processor answered is replaced: the workflow replays to the same key, the retried call
 * answers the same refund, and the intent is settled then. Workflow code: no I/O.
 */
import { ActivityFailure, ApplicationFailure, proxyLocalActivities, uuid4 } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { retryPolicy } from '../domain/activity-failures';
import type { SubscriptionState } from '../domain/subscription';
import type { RefundInput } from '../domain/subscription-messages';
import type { RefundSlice } from './subscription-refunds';

// Before the processor: a few tries. A record that cannot be written sends nothing; the command fails.
const beforeSending = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15s',
  retry: retryPolicy({ initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '5s', maximumAttempts: 5 }),
});
// After: the processor answered, so the record must land; retried until it does, as the projection is.
const afterSending = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15s',
  retry: retryPolicy({ initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '30s' }),
});

type RefundCall = Activities['refundPayment'];
export interface RefundsSent {
  /** What the processor refunded, in order. */
  done: (RefundSlice & { refundId: string })[];
  /** What stopped the request after them, or null. */
  failure: unknown;
}

/** A refusal for good (the processor's, or a record that can never be written): nothing moved. */
function refused(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure && cause.nonRetryable === true;
}

/** The failure as the intent keeps it: its message, at most 500 characters, cut between code points. */
function failureText(err: unknown): string {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  const text = cause instanceof Error ? cause.message : String(cause);
  return [...text].slice(0, 500).join('');
}

/** One processor refund per slice, each recorded before and after; stops at the first that fails. */
export async function refundThroughIntents(
  s: SubscriptionState,
  slices: RefundSlice[],
  input: RefundInput,
  refundPayment: RefundCall,
): Promise<RefundsSent> {
  const done: RefundsSent['done'] = [];
  for (const slice of slices) {
    const id = uuid4();
    const processorKey = `refund-${s.id}-${id}`;
    try {
      await beforeSending.recordRefundIntent({
        id,
        orgId: s.orgId,
        subscriptionId: s.id,
        payment: slice.payment,
        amount: slice.amount,
        currency: s.currency,
        processorKey,
        requestKey: input.requestKey ?? null,
        requestedBy: input.actorId,
        reason: input.reason,
      });
    } catch (err) {
      return { done, failure: err };
    }
    let refundId: string;
    try {
      ({ refundId } = await refundPayment({
        subscriptionId: s.id,
        payment: slice.payment,
        amount: slice.amount,
        currency: s.currency,
        idempotencyKey: processorKey,
      }));
    } catch (err) {
      // A refusal moved nothing. Anything else (the processor unreachable through every try) may have
      // moved it: the intent stays `requested`, noted, and the processor's own notification of a refund
      // that did happen records its money on the subscription (docs/decisions/0284-refunds.md).
      await afterSending.settleRefundIntent(
        refused(err)
          ? { id, status: 'failed', failure: failureText(err) }
          : { id, status: 'requested', failure: `outcome unknown: ${failureText(err)}` },
      );
      return { done, failure: err };
    }
    await afterSending.settleRefundIntent({ id, status: 'succeeded', refundId });
    done.push({ ...slice, refundId });
  }
  return { done, failure: null };
}

/**
 * The refund as it ran before intents existed, for the histories it recorded (test/replay): keys
 * numbered by the subscription's refund requests, nothing written before the processor is called.
 */
export async function refundUnrecorded(
  s: SubscriptionState,
  slices: RefundSlice[],
  refundPayment: RefundCall,
): Promise<RefundsSent> {
  const asked = s.refundsRequested ?? 0;
  const done: RefundsSent['done'] = [];
  for (const [k, slice] of slices.entries()) {
    try {
      const r = await refundPayment({
        subscriptionId: s.id,
        payment: slice.payment,
        amount: slice.amount,
        currency: s.currency,
        idempotencyKey: `refund-${s.id}-${asked}-${k}`,
      });
      done.push({ ...slice, refundId: r.refundId });
    } catch (err) {
      return { done, failure: err };
    }
  }
  return { done, failure: null };
}
