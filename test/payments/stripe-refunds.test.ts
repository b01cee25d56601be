import { randomUUID } from 'node:crypto';
import type { TestService } from '../support/service';
import { openCheckout, reaches, signedSubscription, type World } from './payment-helpers';
import {
  paidSession,
  sendStripeEvent as sendEvent,
  startStripeStack,
  stopStripeStack,
  type StripeStack,
} from './stripe-helpers';
import { subscriptionSettled } from '../support/settled';

/** Refunds and disputes through Stripe, made here or at Stripe (Set B). */
describe('Set B with the Stripe adapter (stripe-mock, locally signed events)', () => {
  let stack: StripeStack | undefined;
  let svc: TestService;
  let w: World;
  beforeAll(async () => {
    stack = await startStripeStack('B');
    ({ svc, w } = stack);
  }, 720_000);
  afterAll(() => stopStripeStack(stack));

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
    const session = await openCheckout(w, id);
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
    const session = await openCheckout(w, id);
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
});
