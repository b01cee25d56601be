import { startService, type TestService } from '../support/service';
import {
  reaches,
  openCheckout,
  postSandboxEvent,
  signedSubscription,
  subscription,
  world,
  type World,
} from './payment-helpers';
import { recordingProxy } from './recording-proxy';
import { sendStripeEvent, stripeEnv } from './stripe-helpers';
import { startStripeMock } from './stripe-mock';
import { until } from '../support/wait';

/**
 * Every payment is compared with what is owed. One that does not match the total,
 * or arrives once the total is paid, is held with `payment.held` and its reason, for staff to
 * refund; the same payment told twice is taken once. A new checkout expires only open sessions.
 */

/** The payment.held events of one subscription, with their reasons, in order. */
async function heldReasons(svc: TestService, id: string): Promise<string[]> {
  const rows: { reason: string }[] = await svc.orm.em
    .getConnection()
    .execute(
      `select data->>'reason' as reason from events where type = 'payment.held' and data->>'subscription_id' = ? order by seq`,
      [id],
    );
  return rows.map((r) => r.reason);
}

/** Waits until the subscription has `count` payment.held events (they are written with the change). */
async function heldCount(svc: TestService, id: string, count: number): Promise<string[]> {
  return until(
    `${count} payment.held events for ${id}`,
    () => heldReasons(svc, id),
    (r) => r.length >= count,
    {
      timeoutMs: 20_000,
      intervalMs: 150,
    },
  );
}

describe('Set B, sandbox: payments compared with what is owed', () => {
  let svc: TestService;
  let w: World;

  beforeAll(async () => {
    svc = await startService({ set: 'B' });
    w = await world(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  const checkout = (id: string) => openCheckout(w, id);
  const succeeded = (id: string, event: string, reference: string, amount: string) =>
    postSandboxEvent(svc, event, 'payment.succeeded', { subscription_id: id, reference, amount, currency: 'USD' });

  it('holds a second payment once the total is paid, and tells the same second payment only once', async () => {
    const id = await signedSubscription(w, 2);
    const first = await checkout(id);
    await succeeded(id, `evt_first_${id}`, first.session_id, '25.00');
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
    // The late first notification made the investor pay a second session.
    await succeeded(id, `evt_second_${id}`, `second-session-${id}`, '25.00');
    expect(await heldCount(svc, id, 1)).toEqual([
      expect.stringMatching(new RegExp(`second payment: the total was already paid by ${first.session_id}`)),
    ]);
    await succeeded(id, `evt_second_again_${id}`, `second-session-${id}`, '25.00');
    await succeeded(id, `evt_first_again_${id}`, first.session_id, '25.00');
    await postSandboxEvent(svc, `evt_marker_${id}`, 'payment.refunded', {
      subscription_id: id,
      reference: first.session_id,
      amount: '25.00',
      currency: 'USD',
    });
    // Notifications apply in order: once the refund shows, the repeats before it were applied too.
    await reaches(w, id, { payment_status: 'refunded' });
    expect(await heldReasons(svc, id)).toHaveLength(1);
    expect(await subscription(w, id)).toMatchObject({ status: 'pending_review' });
  });

  it('holds a payment of another amount than the total, and still takes the right one after it', async () => {
    const id = await signedSubscription(w, 2);
    const session = await checkout(id);
    await succeeded(id, `evt_short_${id}`, `short-${id}`, '1.00');
    expect(await heldCount(svc, id, 1)).toEqual([expect.stringMatching(/paid 1\.00 USD but the total is 25\.00 USD/)]);
    expect(await subscription(w, id)).toMatchObject({ status: 'pending_payment', payment_status: 'pending' });
    await succeeded(id, `evt_right_${id}`, session.session_id, '25.00');
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
    expect(await heldReasons(svc, id)).toHaveLength(1);
  });
});

describe('Set B, Stripe: one payment told twice, a second payment, and linear session calls', () => {
  let mock: Awaited<ReturnType<typeof startStripeMock>>;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let svc: TestService;
  let w: World;

  beforeAll(async () => {
    mock = await startStripeMock();
    proxy = await recordingProxy(mock.url);
    svc = await startService({ set: 'B', env: stripeEnv(proxy.url) });
    w = await world(svc);
  }, 600_000);
  afterAll(async () => {
    await svc?.stop();
    await proxy?.close();
    await mock?.stop();
  });

  const checkout = (id: string) => openCheckout(w, id);

  it('takes the session and its PaymentIntent as one payment, and holds another PaymentIntent', async () => {
    const id = await signedSubscription(w, 2);
    const session = await checkout(id);
    const pi = `pi_one_${id.slice(0, 8)}`;
    await sendStripeEvent(svc, `evt_cs_${id}`, 'checkout.session.completed', {
      id: session.session_id,
      object: 'checkout.session',
      mode: 'payment',
      status: 'complete',
      payment_status: 'paid',
      amount_total: 2500,
      currency: 'usd',
      payment_intent: pi,
      metadata: { subscription_id: id },
    });
    const intent = (piId: string, event: string) =>
      sendStripeEvent(svc, event, 'payment_intent.succeeded', {
        id: piId,
        object: 'payment_intent',
        amount: 2500,
        currency: 'usd',
        status: 'succeeded',
        metadata: { subscription_id: id },
      });
    await intent(pi, `evt_pi_${id}`);
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
    await intent(`pi_two_${id.slice(0, 8)}`, `evt_pi_two_${id}`);
    expect(await heldCount(svc, id, 1)).toEqual([expect.stringMatching(new RegExp(`already paid by ${pi}`))]);
  });

  it('expires each earlier session once: the Nth checkout costs one expire call, not N-1', async () => {
    const id = await signedSubscription(w, 2);
    const sessions: string[] = [];
    for (let i = 0; i < 5; i++) sessions.push((await checkout(id)).session_id);
    const expired = proxy.requests
      .filter((r) => r.method === 'POST')
      .map((r) => /^\/v1\/checkout\/sessions\/([^/]+)\/expire$/.exec(r.path)?.[1])
      .filter((s): s is string => s !== undefined && sessions.includes(s));
    // Each of the four earlier sessions expired exactly once; the newest is open.
    expect(expired.sort()).toEqual(sessions.slice(0, 4).sort());
  });
});
