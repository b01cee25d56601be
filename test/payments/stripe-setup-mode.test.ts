import type { TestService } from '../support/service';
import { reaches, RETURN_URLS, signedSubscription, type World } from './payment-helpers';
import { sendStripeEvent as sendEvent, startStripeStack, stopStripeStack, type StripeStack } from './stripe-helpers';

/** Set A's card on file: a setup-mode session, then the collection off-session after approval. */
describe('Set A with the Stripe adapter (stripe-mock, locally signed events)', () => {
  let stack: StripeStack | undefined;
  let svc: TestService;
  let w: World;
  beforeAll(async () => {
    stack = await startStripeStack('A');
    ({ svc, w } = stack);
  }, 720_000);
  afterAll(() => stopStripeStack(stack));

  it('links a card with a setup-mode session, collects off-session after approval, and completes in escrow', async () => {
    const id = await signedSubscription(w, 4);
    const setup = await w.api.post(`/issuance/subscriptions/${id}/create-setup-session`, w.investor.token, {
      paymentMethod: 'card',
      ...RETURN_URLS,
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
