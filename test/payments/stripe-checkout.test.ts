import type { TestService } from '../support/service';
import { openCheckout, reaches, signedSubscription, subscription, type World } from './payment-helpers';
import {
  paidSession,
  sendStripeEvent as sendEvent,
  startStripeStack,
  stopStripeStack,
  type StripeStack,
} from './stripe-helpers';

/** Checkout Sessions in payment mode (Set B) and what Stripe reports of their payments. */
describe('Set B with the Stripe adapter (stripe-mock, locally signed events)', () => {
  let stack: StripeStack | undefined;
  let svc: TestService;
  let w: World;
  beforeAll(async () => {
    stack = await startStripeStack('B');
    ({ svc, w } = stack);
  }, 720_000);
  afterAll(() => stopStripeStack(stack));

  it('creates a Stripe Checkout Session in payment mode and hands out its URL', async () => {
    const id = await signedSubscription(w, 2);
    const session = await openCheckout(w, id, 'us_bank_account');
    expect(session.session_id).toMatch(/^cs_/);
    expect(session.session_url).toMatch(/^https:\/\/checkout\.stripe\.com\//);
    expect(await subscription(w, id)).toMatchObject({ status: 'pending_payment', payment_method: 'us_bank_account' });
  });

  it('moves to pending_review with received on checkout.session.completed, and refunds through the remembered PaymentIntent', async () => {
    const id = await signedSubscription(w, 2);
    const session = await openCheckout(w, id);
    const ok = await sendEvent(
      svc,
      `evt_paid_${id}`,
      'checkout.session.completed',
      paidSession(id, session.session_id, `pi_paid_${id.slice(0, 8)}`),
    );
    expect([ok.status, ok.body.data.outcome]).toEqual([200, 'signalled']);
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });

    // A refund names only its charge's PaymentIntent, no metadata of ours.
    const refund = await sendEvent(svc, `evt_refund_${id}`, 'charge.refunded', {
      id: 'ch_1',
      object: 'charge',
      currency: 'usd',
      amount: 2500,
      amount_refunded: 2500,
      refunded: true,
      payment_intent: `pi_paid_${id.slice(0, 8)}`,
      metadata: {},
    });
    expect(refund.body.data.outcome).toBe('signalled');
    await reaches(w, id, { status: 'pending_review', payment_status: 'refunded' });
  });

  it('records a failed payment, takes a retry with a new session, and a dispute after success', async () => {
    const id = await signedSubscription(w, 2);
    const first = await openCheckout(w, id);
    const pi = `pi_retry_${id.slice(0, 8)}`;
    await sendEvent(svc, `evt_fail_${id}`, 'payment_intent.payment_failed', {
      id: pi,
      object: 'payment_intent',
      currency: 'usd',
      amount: 2500,
      metadata: { subscription_id: id },
      last_payment_error: { code: 'card_declined', decline_code: 'insufficient_funds' },
    });
    await reaches(w, id, { status: 'pending_payment', payment_status: 'failed' });
    const retry = await openCheckout(w, id);
    expect(retry.session_id).not.toBe(first.session_id);
    await sendEvent(svc, `evt_retry_ok_${id}`, 'checkout.session.completed', paidSession(id, retry.session_id, pi));
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
    await sendEvent(svc, `evt_dispute_${id}`, 'charge.dispute.created', {
      id: 'dp_1',
      object: 'dispute',
      currency: 'usd',
      amount: 2500,
      reason: 'fraudulent',
      payment_intent: pi,
      metadata: {},
    });
    await reaches(w, id, { payment_status: 'disputed' });
  });

  it('shows processing for a delayed method, then received on async_payment_succeeded', async () => {
    const id = await signedSubscription(w, 2);
    const session = await openCheckout(w, id, 'us_bank_account');
    await sendEvent(
      svc,
      `evt_unpaid_${id}`,
      'checkout.session.completed',
      paidSession(id, session.session_id, `pi_ach_${id.slice(0, 8)}`, 'unpaid'),
    );
    await reaches(w, id, { status: 'pending_payment', payment_status: 'processing' });
    await sendEvent(
      svc,
      `evt_async_${id}`,
      'checkout.session.async_payment_succeeded',
      paidSession(id, session.session_id, `pi_ach_${id.slice(0, 8)}`),
    );
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
  });
});
