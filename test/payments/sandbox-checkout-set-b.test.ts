import { actor, newOrg } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import {
  reaches,
  postSandboxEvent,
  processedNotifications,
  signedSubscription,
  subscription,
  world,
  type World,
} from './payment-helpers';
import { notificationProcessed, subscriptionSettled } from '../support/settled';

const SUCCESS = 'https://investor.example/paid';
const CANCEL = 'https://investor.example/cancelled';

/** Set B through the sandbox over HTTP: hosted checkout, signed notifications, retries, reversals. */
describe('Set B with the sandbox processor', () => {
  let svc: TestService;
  let w: World;

  beforeAll(async () => {
    svc = await startService({ set: 'B' });
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
  /** What the person's browser does on the hosted page: a form POST, answered with a redirect. */
  async function choose(sessionUrl: string, outcome: 'complete' | 'decline' | 'cancel') {
    const res = await fetch(`${sessionUrl}/${outcome}`, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, location: res.headers.get('location') };
  }

  it('serves the checkout page at session_url under the public base URL, showing the amount', async () => {
    const id = await signedSubscription(w, 4);
    const session = await checkout(id);
    expect(session.session_url).toBe(`${svc.config.PUBLIC_BASE_URL}/sandbox/checkout/${session.session_id}`);
    const page = await fetch(session.session_url, { signal: AbortSignal.timeout(30_000) });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain('50.00 USD');
  });

  it('moves pending_payment to pending_review with payment received when the investor pays', async () => {
    const id = await signedSubscription(w, 4);
    const session = await checkout(id);
    expect(await choose(session.session_url, 'complete')).toEqual({ status: 303, location: SUCCESS });
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
    const again = await choose(session.session_url, 'complete');
    expect(again.status).toBe(409); // a paid session cannot be paid twice
  });

  it('keeps pending_payment with payment failed on a decline, then takes a retry with a new session', async () => {
    const id = await signedSubscription(w, 2);
    const first = await checkout(id);
    expect(await choose(first.session_url, 'decline')).toEqual({ status: 303, location: CANCEL });
    await reaches(w, id, { status: 'pending_payment', payment_status: 'failed' });

    const retry = await checkout(id);
    expect(retry.session_id).not.toBe(first.session_id);
    expect(await choose(retry.session_url, 'complete')).toEqual({ status: 303, location: SUCCESS });
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
  });

  it('closes an older checkout page once a newer session is opened, so it cannot take a second payment', async () => {
    const id = await signedSubscription(w, 2);
    const older = await checkout(id);
    const newer = await checkout(id);
    expect((await choose(older.session_url, 'complete')).status).toBe(409);
    expect((await fetch(older.session_url)).status).toBe(410);
    await subscriptionSettled(svc, id);
    expect(await subscription(w, id)).toMatchObject({ status: 'pending_payment', payment_status: 'pending' });
    expect(await choose(newer.session_url, 'complete')).toEqual({ status: 303, location: SUCCESS });
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
  });

  it('changes nothing when the investor cancels on the checkout page', async () => {
    const id = await signedSubscription(w, 2);
    const session = await checkout(id);
    expect(await choose(session.session_url, 'cancel')).toEqual({ status: 303, location: CANCEL });
    await subscriptionSettled(svc, id);
    expect(await subscription(w, id)).toMatchObject({ status: 'pending_payment', payment_status: 'pending' });
  });

  it('takes a late success after a failure (the failure arrives first, then the success)', async () => {
    const id = await signedSubscription(w, 2);
    const session = await checkout(id);
    const data = { subscription_id: id, reference: session.session_id, amount: '25.00', currency: 'USD' };
    expect(
      (await postSandboxEvent(svc, 'evt_late_fail', 'payment.failed', { ...data, failure_reason: 'card_declined' }))
        .status,
    ).toBe(200);
    await reaches(w, id, { payment_status: 'failed', status: 'pending_payment' });
    expect((await postSandboxEvent(svc, 'evt_late_ok', 'payment.succeeded', data)).status).toBe(200);
    await reaches(w, id, { payment_status: 'received', status: 'pending_review' });
  });

  it('ignores a failure that arrives after the success (out of order)', async () => {
    const id = await signedSubscription(w, 2);
    const session = await checkout(id);
    const data = { subscription_id: id, reference: session.session_id, amount: '25.00', currency: 'USD' };
    await postSandboxEvent(svc, `evt_ooo_ok_${id}`, 'payment.succeeded', data);
    await reaches(w, id, { payment_status: 'received', status: 'pending_review' });
    await postSandboxEvent(svc, `evt_ooo_fail_${id}`, 'payment.failed', { ...data, failure_reason: 'card_declined' });
    await notificationProcessed(svc, 'sandbox', { eventId: `evt_ooo_fail_${id}` });
    await subscriptionSettled(svc, id);
    expect(await subscription(w, id)).toMatchObject({ payment_status: 'received', status: 'pending_review' });
  });

  it('holds a success that arrives before the subscription is signed, and applies it once it is', async () => {
    const created = await w.api.post(`/issuance/offerings/${w.offering.offeringId}/subscriptions`, w.investor.token, {
      securityClassId: w.offering.securityClassId,
      unitsSubscribed: 1,
    });
    const id = created.body.data.id as string;
    const early = await postSandboxEvent(svc, `evt_early_${id}`, 'payment.succeeded', {
      subscription_id: id,
      reference: 'early',
      amount: '12.50',
      currency: 'USD',
    });
    expect(early.body.data.outcome).toBe('signalled');
    await subscriptionSettled(svc, id);
    expect(await subscription(w, id)).toMatchObject({ status: 'draft', payment_status: 'pending' });
    await w.api.post(`/issuance/subscriptions/${id}/sign-agreement`, w.investor.token, {
      signature: 'Ada Investor',
      signedAt: new Date().toISOString(),
    });
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
  });

  it('takes a duplicate delivery once: the second is acknowledged as a duplicate and recorded once', async () => {
    const id = await signedSubscription(w, 2);
    const data = {
      subscription_id: id,
      reference: 'dup',
      amount: '25.00',
      currency: 'USD',
      failure_reason: 'card_declined',
    };
    const first = await postSandboxEvent(svc, `evt_dup_${id}`, 'payment.failed', data);
    const second = await postSandboxEvent(svc, `evt_dup_${id}`, 'payment.failed', data);
    expect([first.status, first.body.data.outcome]).toEqual([200, 'signalled']);
    expect([second.status, second.body.data.outcome]).toEqual([200, 'duplicate']);
    const rows = (await processedNotifications(svc, 'sandbox')).filter((r) => r.event_id === `evt_dup_${id}`);
    expect(rows).toEqual([{ event_id: `evt_dup_${id}`, outcome: 'signalled', subscription_id: id }]);
  });

  it('refuses a forged signature with 400 and changes nothing', async () => {
    const id = await signedSubscription(w, 2);
    const before = await subscription(w, id);
    const forged = await postSandboxEvent(
      svc,
      `evt_forged_${id}`,
      'payment.succeeded',
      { subscription_id: id, reference: 'x', amount: '25.00', currency: 'USD' },
      `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`,
    );
    expect(forged.status).toBe(400);
    expect(forged.body.error.code).toBe('SIGNATURE_INVALID');
    const unsigned = await fetch(`${svc.baseUrl}/payments/sandbox/notifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"id":"evt_x","type":"payment.succeeded","data":{}}',
    });
    expect(unsigned.status).toBe(400);
    await subscriptionSettled(svc, id);
    expect(await subscription(w, id)).toEqual(before);
    expect((await processedNotifications(svc, 'sandbox')).some((r) => r.event_id === `evt_forged_${id}`)).toBe(false);
  });

  it('acknowledges an unknown event type and ignores it', async () => {
    const id = await signedSubscription(w, 2);
    const res = await postSandboxEvent(svc, `evt_unknown_${id}`, 'payment.teleported', {
      subscription_id: id,
      reference: 'x',
      amount: null,
      currency: 'USD',
    });
    expect(res.status).toBe(200);
    expect(res.body.data.outcome).toBe('ignored');
    await subscriptionSettled(svc, id);
    expect(await subscription(w, id)).toMatchObject({ status: 'pending_payment', payment_status: 'pending' });
  });

  it('shows refunded and disputed payment statuses after the operator refunds or a dispute is opened', async () => {
    const refundedId = await signedSubscription(w, 2);
    const s1 = await checkout(refundedId);
    await choose(s1.session_url, 'complete');
    await reaches(w, refundedId, { payment_status: 'received' });
    const refund = await w.api.post(`/payments/sandbox/operator/payments/${s1.session_id}/refund`, w.staff.token);
    expect(refund.status).toBe(200);
    await reaches(w, refundedId, { payment_status: 'refunded' });

    const disputedId = await signedSubscription(w, 2);
    const s2 = await checkout(disputedId);
    await choose(s2.session_url, 'complete');
    await reaches(w, disputedId, { payment_status: 'received' });
    expect(
      (await w.api.post(`/payments/sandbox/operator/payments/${s2.session_id}/dispute`, w.staff.token)).status,
    ).toBe(200);
    await reaches(w, disputedId, { payment_status: 'disputed' });
    const list = await w.api.get('/issuance/subscriptions', w.investor.token);
    expect(list.body.data.items.find((s: { id: string }) => s.id === disputedId).payment_status).toBe('disputed');

    // An investor cannot use the operator console.
    expect(
      (await w.api.post(`/payments/sandbox/operator/payments/${s2.session_id}/refund`, w.investor.token)).status,
    ).toBe(403);
    // Staff of another organisation do not see this payment at all.
    const stranger = await actor(svc, newOrg(), ['staff']);
    expect(
      (await w.api.post(`/payments/sandbox/operator/payments/${s2.session_id}/refund`, stranger.token)).status,
    ).toBe(404);
    await subscriptionSettled(svc, disputedId);
    expect(await subscription(w, disputedId)).toMatchObject({ payment_status: 'disputed' });
  });
});
