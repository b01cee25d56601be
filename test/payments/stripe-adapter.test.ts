import { randomUUID } from 'node:crypto';
import { startService, type TestService } from '../support/service';
import {
  reaches,
  processedNotifications,
  signedSubscription,
  subscription,
  world,
  type World,
} from './payment-helpers';
import { subscriptionSettled } from '../support/settled';
import { startStripeMock } from './stripe-mock';
import * as stripeHelpers from './stripe-helpers';

const SUCCESS = 'https://investor.example/paid';
const CANCEL = 'https://investor.example/cancelled';

let mock: Awaited<ReturnType<typeof startStripeMock>>;
beforeAll(async () => {
  mock = await startStripeMock();
}, 600_000);
afterAll(() => mock?.stop());

const stripeEnv = () => stripeHelpers.stripeEnv(mock.url);
const sendEvent = stripeHelpers.sendStripeEvent;

const paidSession = (subscriptionId: string, sessionId: string, pi: string, paymentStatus = 'paid') => ({
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

describe('Set B with the Stripe adapter (stripe-mock, locally signed events)', () => {
  let svc: TestService;
  let w: World;

  beforeAll(async () => {
    svc = await startService({ set: 'B', env: stripeEnv() });
    w = await world(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  async function checkout(id: string, paymentMethod = 'card') {
    const res = await w.api.post(`/issuance/subscriptions/${id}/create-checkout-session`, w.investor.token, {
      paymentMethod,
      successUrl: SUCCESS,
      cancelUrl: CANCEL,
    });
    expect(res.status).toBe(200);
    return res.body.data as { session_id: string; session_url: string };
  }

  it('creates a Stripe Checkout Session in payment mode and hands out its URL', async () => {
    const id = await signedSubscription(w, 2);
    const session = await checkout(id, 'us_bank_account');
    expect(session.session_id).toMatch(/^cs_/);
    expect(session.session_url).toMatch(/^https:\/\/checkout\.stripe\.com\//);
    expect(await subscription(w, id)).toMatchObject({ status: 'pending_payment', payment_method: 'us_bank_account' });
  });

  it('moves to pending_review with received on checkout.session.completed, and refunds through the remembered PaymentIntent', async () => {
    const id = await signedSubscription(w, 2);
    const session = await checkout(id);
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
    const first = await checkout(id);
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
    const retry = await checkout(id);
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

  const refundEvents = async (id: string) =>
    (
      await svc.orm.em
        .getConnection()
        .execute<{ data: Record<string, unknown> }[]>(
          `select data from events where data->>'subscription_id' = ? and type = 'payment.refunded' order by seq`,
          [id],
        )
    ).map((r) => r.data);
  const charge = (pi: string, refunded: number) => ({
    id: `ch_${pi}`,
    object: 'charge',
    currency: 'usd',
    amount: 2500,
    amount_refunded: refunded,
    refunded: refunded === 2500,
    payment_intent: pi,
    metadata: {},
  });

  it("refunds a voided subscription through Stripe, partially then the rest, and takes Stripe's report of it once", async () => {
    const id = await signedSubscription(w, 2);
    const session = await checkout(id);
    const pi = `pi_refund_${id.slice(0, 8)}`;
    await sendEvent(svc, `evt_paid_${id}`, 'checkout.session.completed', paidSession(id, session.session_id, pi));
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
    expect(
      (await w.api.post(`/issuance/subscriptions/${id}/void`, w.admin.token, { reason: 'withdrawn' })).status,
    ).toBe(200);
    const refund = (body: Record<string, unknown>) =>
      w.api.post(`/issuance/subscriptions/${id}/refund`, w.admin.token, body, { 'idempotency-key': randomUUID() });
    const over = await refund({ amount: '25.01', reason: 'too much' });
    expect([over.status, over.body.error?.code]).toEqual([422, 'REFUND_EXCEEDS_REFUNDABLE']);
    const part = await refund({ amount: '10.00', reason: 'part' });
    expect(part.body.data).toMatchObject({
      payment_status: 'received',
      amount_refunded: '10.00',
      amount_received: '25.00',
    });
    // stripe-mock answered a Refund object: its id is what the event records.
    expect((await refundEvents(id))[0]).toMatchObject({
      payment: pi,
      amount: '10.00',
      reference: expect.stringMatching(/^re_/),
    });
    // Stripe's own report of that refund changes nothing more.
    await sendEvent(svc, `evt_rf1_${id}`, 'charge.refunded', charge(pi, 1000));
    await subscriptionSettled(svc, id);
    expect(await refundEvents(id)).toHaveLength(1);
    const rest = await refund({ reason: 'the rest' });
    expect(rest.body.data).toMatchObject({ status: 'voided', payment_status: 'refunded', amount_refunded: '25.00' });
  });

  it('records a partial refund made at Stripe, and clears disputed when the dispute closes won', async () => {
    const id = await signedSubscription(w, 2);
    const session = await checkout(id);
    const pi = `pi_partial_${id.slice(0, 8)}`;
    await sendEvent(svc, `evt_paid_${id}`, 'checkout.session.completed', paidSession(id, session.session_id, pi));
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
    const partial = await sendEvent(svc, `evt_partial_${id}`, 'charge.refunded', charge(pi, 500));
    expect(partial.body.data.outcome).toBe('signalled');
    await reaches(w, id, { payment_status: 'received', amount_received: '25.00', amount_refunded: '5.00' });
    expect(await refundEvents(id)).toEqual([
      expect.objectContaining({ payment: pi, partial: true, amount_refunded: '5.00' }),
    ]);

    const dispute = {
      id: `dp_${id.slice(0, 8)}`,
      object: 'dispute',
      currency: 'usd',
      amount: 2000,
      payment_intent: pi,
      metadata: {},
    };
    await sendEvent(svc, `evt_dp_${id}`, 'charge.dispute.created', {
      ...dispute,
      reason: 'fraudulent',
      status: 'needs_response',
    });
    await reaches(w, id, { payment_status: 'disputed' });
    await sendEvent(svc, `evt_dp_won_${id}`, 'charge.dispute.closed', {
      ...dispute,
      reason: 'fraudulent',
      status: 'won',
    });
    await reaches(w, id, { status: 'pending_review', payment_status: 'received', amount_refunded: '5.00' });
  });

  it('shows processing for a delayed method, then received on async_payment_succeeded', async () => {
    const id = await signedSubscription(w, 2);
    const session = await checkout(id, 'us_bank_account');
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

  it('refuses forged and tampered events with 400 and changes nothing', async () => {
    const id = await signedSubscription(w, 2);
    const before = await subscription(w, id);
    const forged = await sendEvent(
      svc,
      `evt_forged_${id}`,
      'checkout.session.completed',
      paidSession(id, 'cs_x', 'pi_x'),
      'whsec_not_the_secret',
    );
    expect([forged.status, forged.body.error.code]).toEqual([400, 'SIGNATURE_INVALID']);
    const tampered = await sendEvent(
      svc,
      `evt_tampered_${id}`,
      'payment_intent.payment_failed',
      { id: 'pi_t', object: 'payment_intent', amount: 2500, currency: 'usd', metadata: { subscription_id: id } },
      stripeHelpers.WEBHOOK_SECRET,
      (body) => body.replace('payment_intent.payment_failed', 'payment_intent.succeeded'),
    );
    expect(tampered.status).toBe(400);
    await subscriptionSettled(svc, id);
    expect(await subscription(w, id)).toEqual(before);
    const ids = (await processedNotifications(svc, 'stripe')).map((r) => r.event_id);
    expect(ids).not.toContain(`evt_forged_${id}`);
    expect(ids).not.toContain(`evt_tampered_${id}`);
  });

  it('takes a redelivered event once, and acknowledges types it does not handle', async () => {
    const id = await signedSubscription(w, 2);
    const object = {
      id: `pi_dup_${id.slice(0, 8)}`,
      object: 'payment_intent',
      currency: 'usd',
      amount: 2500,
      metadata: { subscription_id: id },
    };
    expect((await sendEvent(svc, `evt_dup_${id}`, 'payment_intent.processing', object)).body.data.outcome).toBe(
      'signalled',
    );
    expect((await sendEvent(svc, `evt_dup_${id}`, 'payment_intent.processing', object)).body.data.outcome).toBe(
      'duplicate',
    );
    await reaches(w, id, { payment_status: 'processing' });
    const unknown = await sendEvent(svc, `evt_cust_${id}`, 'customer.created', {
      id: 'cus_1',
      object: 'customer',
      metadata: { subscription_id: id },
    });
    expect([unknown.status, unknown.body.data.outcome]).toEqual([200, 'ignored']);
    const setup = await sendEvent(svc, `evt_setup_${id}`, 'checkout.session.completed', {
      id: 'cs_setup',
      object: 'checkout.session',
      mode: 'setup',
      status: 'complete',
      metadata: { subscription_id: id },
    });
    expect(setup.body.data.outcome).toBe('ignored');
  });
});

describe('Set A with the Stripe adapter (stripe-mock, locally signed events)', () => {
  let svc: TestService;
  let w: World;

  beforeAll(async () => {
    svc = await startService({ set: 'A', env: stripeEnv() });
    w = await world(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  it('links a card with a setup-mode session, collects off-session after approval, and completes in escrow', async () => {
    const id = await signedSubscription(w, 4);
    const setup = await w.api.post(`/issuance/subscriptions/${id}/create-setup-session`, w.investor.token, {
      paymentMethod: 'card',
      successUrl: SUCCESS,
      cancelUrl: CANCEL,
    });
    expect(setup.body.data.session_id).toMatch(/^cs_/);
    expect((await w.api.post(`/issuance/subscriptions/${id}/finalize-setup`, w.investor.token)).status).toBe(200);
    expect(
      (await w.api.post(`/issuance/subscriptions/${id}/submit-for-review`, w.investor.token, {})).body.data.status,
    ).toBe('pending_review');
    expect((await w.api.post(`/issuance/subscriptions/${id}/approve`, w.staff.token)).status).toBe(200);
    await reaches(w, id, { status: 'approved', payment_status: 'processing' });

    // The collection's PaymentIntent, created on stripe-mock, is remembered for this subscription.
    const refs: { reference: string }[] = await svc.orm.em
      .getConnection()
      .execute(`select reference from payment_references where subscription_id = ? and reference like 'pi_%'`, [id]);
    expect(refs).toHaveLength(1);
    const pi = refs[0]!.reference;

    const res = await sendEvent(svc, `evt_collected_${id}`, 'payment_intent.succeeded', {
      id: pi,
      object: 'payment_intent',
      currency: 'usd',
      amount: 5000,
      status: 'succeeded',
      metadata: { subscription_id: id, purpose: 'collection' },
    });
    expect(res.body.data.outcome).toBe('signalled');
    await reaches(w, id, { status: 'completed', payment_status: 'in_escrow' });
  });
});
