import { ApplicationFailure } from '@temporalio/common';
import type { Collection, CollectionRequest, PaymentProcessor, Session, SessionRequest, SetupResult } from '../domain/payment-processor';

/** The subscription workflow's calls to the payment processor, as activities. */
export function createPaymentActivities(processor: PaymentProcessor) {
  return {
    async createSetupSession(req: SessionRequest): Promise<Session> {
      return processor.createSetupSession(req);
    },
    async getSetupResult(sessionId: string): Promise<SetupResult> {
      return processor.getSetupResult(sessionId);
    },
    async createCheckoutSession(req: SessionRequest): Promise<Session> {
      return processor.createCheckoutSession(req);
    },
    async collectPayment(req: CollectionRequest): Promise<Collection> {
      if (!req.setupSessionId) throw ApplicationFailure.nonRetryable('no linked payment method', 'NO_PAYMENT_METHOD');
      return processor.collect(req);
    },
  };
}
