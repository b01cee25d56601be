import type Stripe from 'stripe';
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
} from '../../domain/payment-processor';
import type { PaymentMethod } from '../../domain/subscription';
import type { PaymentReferences } from '../payment-references';
import { toStripeAmount } from './stripe-amounts';

/** spec §2.4 methods as Stripe payment method types; `other` lets Stripe offer what the account has enabled. */
const METHOD_TYPES: Record<PaymentMethod, Stripe.Checkout.SessionCreateParams.PaymentMethodType[] | undefined> = {
  card: ['card'],
  us_bank_account: ['us_bank_account'],
  crypto: ['crypto'],
  wire: ['customer_balance'],
  other: undefined,
};

const idOf = (v: string | { id: string } | null | undefined): string | null =>
  v == null ? null : typeof v === 'string' ? v : v.id;

/**
 * Stripe behind the port: Checkout Sessions in setup mode (Set A, the SetupIntent links a method
 * to a Customer) and payment mode (Set B), and an off-session PaymentIntent that collects after
 * approval. Outcomes arrive as webhooks (payments/stripe/stripe-events.ts).
 */
export function createStripeProcessor(stripe: Stripe, references: PaymentReferences): PaymentProcessor {
  const metadata = (req: { subscriptionId: string }) => ({ subscription_id: req.subscriptionId });

  async function remembered(session: Stripe.Checkout.Session, req: SessionRequest): Promise<Session> {
    await references.remember(session.id, req.subscriptionId);
    if (!session.url) throw new Error(`Stripe returned checkout session ${session.id} without a URL`);
    return { sessionId: session.id, sessionUrl: session.url };
  }

  /**
   * A retry opens a new session; the earlier ones must not take a second payment. Only the open
   * ones are expired, each once, so the calls stay linear in the sessions a subscription makes.
   */
  async function expireOpenSessions(subscriptionId: string): Promise<void> {
    for (const id of await references.openOf(subscriptionId, 'cs_')) {
      try {
        await stripe.checkout.sessions.expire(id);
      } catch (err) {
        // Already complete or expired: Stripe refuses, and that is the state we want.
        if ((err as { type?: string }).type !== 'StripeInvalidRequestError') throw err;
      }
      await references.close(id);
    }
  }

  const calls: PaymentProcessor = {
    name: 'stripe',

    closeSessions: (subscriptionId: string) => expireOpenSessions(subscriptionId),

    async createSetupSession(req: SessionRequest): Promise<Session> {
      // Off-session charges need the method attached to a Customer; setup mode attaches it.
      const customer = await stripe.customers.create({ metadata: { investor_id: req.investorId, ...metadata(req) } });
      const session = await stripe.checkout.sessions.create({
        mode: 'setup',
        customer: customer.id,
        currency: req.currency.toLowerCase(),
        payment_method_types: METHOD_TYPES[req.method],
        client_reference_id: req.subscriptionId,
        success_url: req.successUrl,
        cancel_url: req.cancelUrl,
        metadata: metadata(req),
        setup_intent_data: { metadata: metadata(req) },
      });
      return remembered(session, req);
    },

    async getSetupResult(sessionId: string): Promise<SetupResult> {
      const session = await stripe.checkout.sessions.retrieve(sessionId, { expand: ['setup_intent'] });
      const intent = session.setup_intent as Stripe.SetupIntent | string | null;
      const paymentMethodRef = intent && typeof intent !== 'string' ? idOf(intent.payment_method) : null;
      const status =
        session.status === 'complete' && paymentMethodRef
          ? 'complete'
          : session.status === 'expired'
            ? 'expired'
            : 'open';
      return { status, paymentMethodRef: status === 'complete' ? paymentMethodRef : null };
    },

    async createCheckoutSession(req: SessionRequest): Promise<Session> {
      if (!req.amount) throw new PaymentRefused('AMOUNT_REQUIRED', 'a checkout session needs an amount');
      await expireOpenSessions(req.subscriptionId);
      const wire = req.method === 'wire';
      const customer = wire
        ? (await stripe.customers.create({ metadata: { investor_id: req.investorId, ...metadata(req) } })).id
        : undefined;
      const session = await stripe.checkout.sessions.create({
        mode: 'payment',
        customer,
        payment_method_types: METHOD_TYPES[req.method],
        ...(wire
          ? {
              payment_method_options: {
                customer_balance: { funding_type: 'bank_transfer', bank_transfer: { type: 'us_bank_transfer' } },
              },
            }
          : {}),
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: req.currency.toLowerCase(),
              unit_amount: toStripeAmount(req.amount, req.currency),
              product_data: { name: `Subscription ${req.subscriptionId}` },
            },
          },
        ],
        client_reference_id: req.subscriptionId,
        success_url: req.successUrl,
        cancel_url: req.cancelUrl,
        metadata: metadata(req),
        payment_intent_data: { metadata: metadata(req) },
      });
      return remembered(session, req);
    },

    /** A refund of the PaymentIntent (partial when the amount is less); its outcome also arrives as charge.refunded. */
    async refund(req: RefundRequest): Promise<Refund> {
      if (!req.payment.startsWith('pi_')) {
        throw new PaymentRefused('NOT_A_STRIPE_PAYMENT', `payment ${req.payment} is not a Stripe PaymentIntent`);
      }
      const refund = await stripe.refunds.create(
        {
          payment_intent: req.payment,
          amount: toStripeAmount(req.amount, req.currency),
          metadata: metadata(req),
        },
        { idempotencyKey: req.idempotencyKey },
      );
      return { refundId: refund.id };
    },

    async collect(req: CollectionRequest): Promise<Collection> {
      const session = await stripe.checkout.sessions.retrieve(req.setupSessionId, { expand: ['setup_intent'] });
      const intent = session.setup_intent as Stripe.SetupIntent | null;
      const paymentMethod = intent ? idOf(intent.payment_method) : null;
      const customer = idOf(session.customer) ?? (intent ? idOf(intent.customer) : null);
      if (!paymentMethod || !customer)
        throw new PaymentRefused(
          'NO_PAYMENT_METHOD',
          `setup session ${req.setupSessionId} has no linked payment method`,
        );
      try {
        const pi = await stripe.paymentIntents.create(
          {
            amount: toStripeAmount(req.amount, req.currency),
            currency: req.currency.toLowerCase(),
            customer,
            payment_method: paymentMethod,
            off_session: true,
            confirm: true,
            metadata: { ...metadata(req), purpose: 'collection' },
          },
          { idempotencyKey: req.idempotencyKey },
        );
        await references.remember(pi.id, req.subscriptionId);
        return { collectionId: pi.id };
      } catch (err) {
        // A decline still made a PaymentIntent; its failure arrives as payment_intent.payment_failed.
        const declined = (err as { type?: string; payment_intent?: { id: string } }).payment_intent;
        if ((err as { type?: string }).type === 'StripeCardError' && declined) {
          await references.remember(declined.id, req.subscriptionId);
          return { collectionId: declined.id };
        }
        throw err;
      }
    },
  };

  return {
    name: calls.name,
    createSetupSession: (req) => refusalsFinal(() => calls.createSetupSession(req)),
    getSetupResult: (id) => refusalsFinal(() => calls.getSetupResult(id)),
    createCheckoutSession: (req) => refusalsFinal(() => calls.createCheckoutSession(req)),
    collect: (req) => refusalsFinal(() => calls.collect(req)),
    closeSessions: (id) => refusalsFinal(() => calls.closeSessions(id)),
    refund: (req) => refusalsFinal(() => calls.refund(req)),
  };
}

/**
 * Stripe's 4xx answers to a request that was wrong (bad parameters, a reused idempotency key, a
 * card refused before any PaymentIntent) fail the same way every time: refusals, not outages.
 * Connection, rate-limit, authentication and 5xx errors stay retryable.
 */
async function refusalsFinal<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const e = err as { type?: string; code?: string; message?: string };
    if (e.type === 'StripeInvalidRequestError' || e.type === 'StripeIdempotencyError' || e.type === 'StripeCardError') {
      throw new PaymentRefused(
        e.code ? `STRIPE_${e.code.toUpperCase()}` : 'STRIPE_REFUSED',
        e.message ?? 'Stripe refused the request',
      );
    }
    throw err;
  }
}
