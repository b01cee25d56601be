import type { TestService } from '../support/service';
import { processedNotifications, reaches, signedSubscription, subscription, type World } from './payment-helpers';
import {
  paidSession,
  sendStripeEvent as sendEvent,
  startStripeStack,
  stopStripeStack,
  type StripeStack,
  WEBHOOK_SECRET,
} from './stripe-helpers';
import { subscriptionSettled } from '../support/settled';

/** Stripe's events: only signed ones taken, each once, unknown types acknowledged (Set B). */
describe('Set B with the Stripe adapter (stripe-mock, locally signed events)', () => {
  let stack: StripeStack | undefined;
  let svc: TestService;
  let w: World;
  beforeAll(async () => {
    stack = await startStripeStack('B');
    ({ svc, w } = stack);
  }, 720_000);
  afterAll(() => stopStripeStack(stack));

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
      WEBHOOK_SECRET,
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
