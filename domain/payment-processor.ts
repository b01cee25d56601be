/**
 * The payment-processor port (spec §2.4, §2.5, §3). Adapters: the built-in sandbox and Stripe.
 * Money crosses it as two-decimal strings; the processor reports back through notifications.
 */
import type { PaymentMethod } from './subscription';

export interface SessionRequest {
  subscriptionId: string;
  investorId: string;
  method: PaymentMethod;
  /** Set B checkout only: what to charge. */
  amount?: string;
  currency: string;
  successUrl: string;
  cancelUrl: string;
}
export interface Session {
  sessionId: string;
  sessionUrl: string;
}
export interface SetupResult {
  status: 'complete' | 'open' | 'expired';
  /** The processor's handle of the linked method, once complete. */
  paymentMethodRef: string | null;
}
export interface CollectionRequest {
  subscriptionId: string;
  setupSessionId: string;
  amount: string;
  currency: string;
  /** The same key for every retry of one collection, so the processor charges once. */
  idempotencyKey: string;
}
export interface Collection {
  collectionId: string;
}

export interface RefundRequest {
  subscriptionId: string;
  /** The payment to refund (PaymentNotification.payment: Stripe's PaymentIntent, the sandbox's session or collection). */
  payment: string;
  amount: string;
  currency: string;
  /** The same key for every retry of one refund, so the processor refunds once. */
  idempotencyKey: string;
}
export interface Refund {
  refundId: string;
}

/**
 * The processor refused for good: retrying the same call cannot help (an invalid request, no
 * linked payment method). Anything else an adapter throws is taken as transient and retried.
 */
export class PaymentRefused extends Error {
  override name = 'PaymentRefused';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface PaymentProcessor {
  readonly name: string;
  createSetupSession(req: SessionRequest): Promise<Session>;
  getSetupResult(sessionId: string): Promise<SetupResult>;
  createCheckoutSession(req: SessionRequest): Promise<Session>;
  /** Set A: off-session collection after approval; the outcome arrives as notifications. */
  collect(req: CollectionRequest): Promise<Collection>;
  /**
   * Cancel or void: no open setup or checkout session of the subscription may take a payment
   * any more. Idempotent; a session already finished is left as it is.
   */
  closeSessions(subscriptionId: string): Promise<void>;
  /**
   * Sends `amount` of a payment back to the payer (docs/decisions/0284-refunds.md). Refuses
   * (PaymentRefused) what the processor will never do: more than is left, a disputed payment.
   */
  refund(req: RefundRequest): Promise<Refund>;
}
