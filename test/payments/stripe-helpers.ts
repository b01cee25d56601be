import Stripe from 'stripe';
import type { BehaviourSet } from '../../lib/behaviour-set';
import { startService, type TestService } from '../support/service';
import { world, type World } from './payment-helpers';
import { startStripeMock } from './stripe-mock';

export const WEBHOOK_SECRET = 'whsec_tranche_test_secret_0123456789';
// Used only to sign events locally with Stripe's own scheme; it never calls the API.
const signer = new Stripe('sk_test_signer_only');

/** The service's environment for the Stripe adapter, pointed at stripe-mock (or a proxy in front of it). */
export const stripeEnv = (apiUrl: string) => ({
  PAYMENT_PROCESSOR: 'stripe',
  STRIPE_SECRET_KEY: 'sk_test_tranche',
  STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
  STRIPE_API_URL: apiUrl,
  STRIPE_TIMEOUT_MS: '5000',
});

/** A Stripe event, as Stripe would POST it, signed with the endpoint's secret (or another). */
export async function sendStripeEvent(
  svc: TestService,
  id: string,
  type: string,
  object: Record<string, unknown>,
  secret = WEBHOOK_SECRET,
  tamper?: (body: string) => string,
) {
  const payload = JSON.stringify({
    id,
    object: 'event',
    type,
    api_version: '2026-08-26.dahlia',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object },
  });
  const header = signer.webhooks.generateTestHeaderString({ payload, secret });
  const res = await fetch(`${svc.baseUrl}/payments/stripe/notifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header },
    body: tamper ? tamper(payload) : payload,
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** The Stripe adapter's stack for a set: stripe-mock, the service pointed at it, and its world. */
export interface StripeStack {
  mock: Awaited<ReturnType<typeof startStripeMock>>;
  svc: TestService;
  w: World;
}

export async function startStripeStack(set: BehaviourSet): Promise<StripeStack> {
  const mock = await startStripeMock();
  let svc: TestService | undefined;
  try {
    svc = await startService({ set, env: stripeEnv(mock.url) });
    return { mock, svc, w: await world(svc) };
  } catch (err) {
    await stopStripeStack({ mock, svc });
    throw err;
  }
}

export async function stopStripeStack(stack: Partial<StripeStack> | undefined): Promise<void> {
  await stack?.svc?.stop();
  await stack?.mock?.stop();
}

/** A Checkout Session as Stripe reports it complete: 25.00 USD, paid unless said otherwise. */
export const paidSession = (subscriptionId: string, sessionId: string, pi: string, paymentStatus = 'paid') => ({
  id: sessionId,
  object: 'checkout.session',
  mode: 'payment',
  status: 'complete',
  payment_status: paymentStatus,
  amount_total: 2500,
  currency: 'usd',
  payment_intent: pi,
  metadata: { subscription_id: subscriptionId },
});
