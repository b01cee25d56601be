import { ApplicationFailure } from '@temporalio/common';
import {
  PaymentRefused,
  type Collection,
  type CollectionRequest,
  type PaymentProcessor,
  type Refund,
  type RefundRequest,
  type Session,
  type SessionRequest,
  type SetupResult,
} from '../domain/payment-processor';
import { pauseForTest, type PausePoint } from '../lib/runtime/test-pause';

/** A refusal for good stops the activity's retries; everything else is retried as an outage. */
async function finalOnRefusal<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof PaymentRefused) throw ApplicationFailure.nonRetryable(err.message, err.code);
    throw err;
  }
}

/**
 * The subscription workflow's calls to the payment processor, as activities. `pauseAt`: a fault test's
 * pause point (TEST_PAUSE_AT, NODE_ENV=test only).
 */
export function createPaymentActivities(processor: PaymentProcessor, opts: { pauseAt?: PausePoint } = {}) {
  return {
    async createSetupSession(req: SessionRequest): Promise<Session> {
      return finalOnRefusal(() => processor.createSetupSession(req));
    },
    async getSetupResult(sessionId: string): Promise<SetupResult> {
      return finalOnRefusal(() => processor.getSetupResult(sessionId));
    },
    async createCheckoutSession(req: SessionRequest): Promise<Session> {
      return finalOnRefusal(() => processor.createCheckoutSession(req));
    },
    async closeSessions(subscriptionId: string): Promise<void> {
      return finalOnRefusal(() => processor.closeSessions(subscriptionId));
    },
    async refundPayment(req: RefundRequest): Promise<Refund> {
      const refund = await finalOnRefusal(() => processor.refund(req));
      // The money has left and the workflow does not know yet: where a crash hurts most.
      await pauseForTest(opts.pauseAt, 'refund-sent');
      return refund;
    },
    async collectPayment(req: CollectionRequest): Promise<Collection> {
      if (!req.setupSessionId) throw ApplicationFailure.nonRetryable('no linked payment method', 'NO_PAYMENT_METHOD');
      return finalOnRefusal(() => processor.collect(req));
    },
  };
}
