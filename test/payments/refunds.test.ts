import { randomUUID } from 'node:crypto';
import type { BehaviourSet } from '../../lib/behaviour-set';
import { startService, type TestService } from '../support/service';
import { reaches, RETURN_URLS, signedSubscription, subscription, world, type World } from './payment-helpers';
import { subscriptionSettled } from '../support/settled';
import { until } from '../support/wait';

/**
 * Money going back through the sandbox processor (docs/decisions/0284-refunds.md,
 * 0285-dispute-outcomes.md, 0287-counters-follow-money.md): staff refunds through the API,
 * refunds and dispute outcomes the processor reports, and the offering's counters after each.
 */
const pay = async (sessionUrl: string) => {
  const res = await fetch(`${sessionUrl}/complete`, {
    method: 'POST',
    redirect: 'manual',
    signal: AbortSignal.timeout(30_000),
  });
  expect(res.status).toBe(303);
};

async function offeringCounters(svc: TestService, w: World) {
  const [row] = await svc.orm.em
    .getConnection()
    .execute(`select investor_count, raised_amount::numeric(39,2)::text as raised from offerings where id = ?`, [
      w.offering.offeringId,
    ]);
  return row as { investor_count: number; raised: string };
}

async function paymentEvents(svc: TestService, id: string): Promise<string[]> {
  const rows: { type: string }[] = await svc.orm.em
    .getConnection()
    .execute(`select type from events where data->>'subscription_id' = ? and type like 'payment.%' order by seq`, [id]);
  return rows.map((r) => r.type);
}

async function auditEntries(svc: TestService, id: string, action: string) {
  return svc.orm.em
    .getConnection()
    .execute<{ actor_user_id: string; after: Record<string, unknown> | null }[]>(
      `select actor_user_id, after from audit_events where subject_id = ? and action = ? order by seq`,
      [id, action],
    );
}

/** A refund request, under a key of its own as the route requires (docs/decisions/0373-idempotency-key-required-where-money-moves.md). */
const refund = (w: World, id: string, body: Record<string, unknown>, who = w.admin) =>
  w.api.post(`/issuance/subscriptions/${id}/refund`, who.token, body, { 'idempotency-key': randomUUID() });

describe.each(['A', 'B'] as BehaviourSet[])('refunds through the API, Set %s (sandbox)', (set) => {
  let svc: TestService;
  let w: World;

  beforeAll(async () => {
    svc = await startService({ set, env: { SANDBOX_AUTO_SETTLE: 'false' } });
    w = await world(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  /** A subscription whose money the sandbox took: Set B paid at checkout, Set A collected and settled after approval. */
  async function paid(): Promise<{ id: string; payment: string }> {
    const id = await signedSubscription(w, 4); // 50.00 USD
    if (set === 'B') {
      const res = await w.api.post(`/issuance/subscriptions/${id}/create-checkout-session`, w.investor.token, {
        paymentMethod: 'card',
        ...RETURN_URLS,
      });
      await pay(res.body.data.session_url);
      await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
      return { id, payment: res.body.data.session_id };
    }
    const setup = await w.api.post(`/issuance/subscriptions/${id}/create-setup-session`, w.investor.token, {
      paymentMethod: 'card',
      ...RETURN_URLS,
    });
    await pay(setup.body.data.session_url);
    expect((await w.api.post(`/issuance/subscriptions/${id}/finalize-setup`, w.investor.token)).status).toBe(200);
    expect((await w.api.post(`/issuance/subscriptions/${id}/submit-for-review`, w.investor.token, {})).status).toBe(
      200,
    );
    expect((await w.api.post(`/issuance/subscriptions/${id}/approve`, w.staff.token)).status).toBe(200);
    await reaches(w, id, { payment_status: 'processing' });
    const collections = (await w.api.get(`/payments/sandbox/operator/collections?subscription_id=${id}`, w.staff.token))
      .body.data as { id: string }[];
    return { id, payment: collections[0]!.id };
  }
  /** The sandbox's own reports of `n` refunds have been taken in and the workflow has handled them. */
  const refundsReported = async (id: string, n: number) => {
    const knex = svc.orm.em.getConnection().getKnex();
    await until(
      `${n} payment.refunded reports for ${id} to be processed`,
      () =>
        knex('payment_notifications').where({
          processor: 'sandbox',
          subscription_id: id,
          event_type: 'payment.refunded',
        }),
      (rows) => rows.length >= n,
    );
    await subscriptionSettled(svc, id);
  };
  const settleCollection = async (payment: string) =>
    expect((await w.api.post(`/payments/sandbox/operator/collections/${payment}/settle`, w.staff.token)).status).toBe(
      200,
    );

  it('refunds a voided subscription whose money was taken: over-refund refused, partial, then the rest', async () => {
    const { id, payment } = await paid();
    const voided = await w.api.post(`/issuance/subscriptions/${id}/void`, w.admin.token, { reason: 'withdrawn' });
    expect(voided.body.data?.status).toBe('voided');
    if (set === 'A') {
      // The collection was already under way: its money arrives after the void and is held.
      await settleCollection(payment);
      await reaches(w, id, { payment_status: 'received' });
    }
    // Only admins refund.
    expect((await refund(w, id, { reason: 'x' }, w.staff)).status).toBe(403);

    const over = await refund(w, id, { amount: '50.01', reason: 'too much' });
    expect([over.status, over.body.error?.code, over.body.error?.details?.refundable]).toEqual([
      422,
      'REFUND_EXCEEDS_REFUNDABLE',
      '50.00',
    ]);

    const part = await refund(w, id, { amount: '20.00', reason: 'part of it' });
    expect(part.status).toBe(200);
    expect(part.body.data).toMatchObject({
      payment_status: 'received',
      amount_received: '50.00',
      amount_refunded: '20.00',
    });
    // The sandbox reports the same refund back: recorded once.
    await refundsReported(id, 1);
    expect(await subscription(w, id)).toMatchObject({ amount_refunded: '20.00', payment_status: 'received' });

    const over2 = await refund(w, id, { amount: '30.01', reason: 'too much' });
    expect([over2.status, over2.body.error?.details?.refundable]).toEqual([422, '30.00']);

    const rest = await refund(w, id, { reason: 'the rest' });
    expect(rest.status).toBe(200);
    expect(rest.body.data).toMatchObject({
      status: 'voided',
      payment_status: 'refunded',
      amount_received: '50.00',
      amount_refunded: '50.00',
    });
    await refundsReported(id, 2);
    expect(await subscription(w, id)).toMatchObject({ payment_status: 'refunded', amount_refunded: '50.00' });
    const nothing = await refund(w, id, { reason: 'again' });
    expect([nothing.status, nothing.body.error?.code]).toEqual([409, 'NOTHING_TO_REFUND']);

    const held = set === 'A' ? ['payment.held'] : [];
    expect(await paymentEvents(svc, id)).toEqual([...held, 'payment.refunded', 'payment.refunded']);
    const audited = await auditEntries(svc, id, 'subscription.refund');
    expect(audited.filter((a) => a.after).map((a) => a.after)).toEqual([
      expect.objectContaining({ amount_refunded: '20.00', requested: '20.00', reason: 'part of it' }),
      expect.objectContaining({ amount_refunded: '50.00', payment_status: 'refunded', requested: 'all' }),
    ]);
  });

  it('refuses to refund the payment of a subscription still under way, until it is rejected', async () => {
    const { id, payment } = await paid();
    if (set === 'A') {
      await settleCollection(payment);
      await reaches(w, id, { status: 'completed', payment_status: 'in_escrow' });
      const completed = await refund(w, id, { reason: 'changed mind' });
      expect([completed.status, completed.body.error?.code]).toEqual([409, 'REFUND_NOT_ALLOWED']);
      return;
    }
    const early = await refund(w, id, { reason: 'changed mind' });
    expect([early.status, early.body.error?.code]).toEqual([409, 'REFUND_NOT_ALLOWED']);
    expect((await w.api.post(`/issuance/subscriptions/${id}/reject`, w.staff.token, { reason: 'no' })).status).toBe(
      200,
    );
    const after = await refund(w, id, { reason: 'rejected' });
    expect(after.body.data).toMatchObject({ status: 'rejected', payment_status: 'refunded', amount_refunded: '50.00' });
  });

  if (set === 'B') {
    it('refunds a held second payment and leaves the subscription paid', async () => {
      const id = await signedSubscription(w, 4);
      const open = async () =>
        (
          await w.api.post(`/issuance/subscriptions/${id}/create-checkout-session`, w.investor.token, {
            paymentMethod: 'card',
            ...RETURN_URLS,
          })
        ).body.data as { session_id: string; session_url: string };
      const first = await open();
      const second = await open();
      await pay(second.session_url);
      await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
      // The race a real processor allows: the older page was still open and took a second payment.
      await svc.orm.em
        .getConnection()
        .execute(`update payment_sandbox_sessions set status = 'open' where id = ?`, [first.session_id]);
      await pay(first.session_url);
      await reaches(w, id, { amount_received: '100.00' });
      expect(await subscription(w, id)).toMatchObject({ amount_received: '100.00', amount_refunded: '0.00' });

      const res = await refund(w, id, { reason: 'paid twice' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        status: 'pending_review',
        payment_status: 'received',
        amount_received: '100.00',
        amount_refunded: '50.00',
      });
      const [row] = await svc.orm.em
        .getConnection()
        .execute(`select status, refunded_cents::text as refunded from payment_sandbox_sessions where id = ?`, [
          first.session_id,
        ]);
      expect(row).toEqual({ status: 'refunded', refunded: '5000' });
      // The subscription's own payment stays while it is under review.
      const again = await refund(w, id, { reason: 'again' });
      expect([again.status, again.body.error?.code]).toEqual([409, 'REFUND_NOT_ALLOWED']);
    });
  }

  if (set === 'A') {
    it('records processor refunds and dispute outcomes on a completed subscription, and the counters follow', async () => {
      const before = await offeringCounters(svc, w);
      const { id, payment } = await paid();
      await settleCollection(payment);
      await reaches(w, id, { status: 'completed', payment_status: 'in_escrow' });
      const counted = await offeringCounters(svc, w);
      expect(Number(counted.raised) - Number(before.raised)).toBe(50);
      const op = (path: string, body?: Record<string, unknown>) =>
        w.api.post(`/payments/sandbox/operator/payments/${payment}/${path}`, w.staff.token, body);

      // A partial refund from the processor's side: recorded, the payment stays in escrow.
      expect((await op('refund', { amount: '10.00' })).body.data.status).toBe('partially_refunded');
      await reaches(w, id, { amount_refunded: '10.00', payment_status: 'in_escrow' });
      expect(await offeringCounters(svc, w)).toEqual({
        investor_count: counted.investor_count,
        raised: (Number(counted.raised) - 10).toFixed(2),
      });

      // A dispute won clears disputed back to what it was.
      expect((await op('dispute')).status).toBe(200);
      await reaches(w, id, { payment_status: 'disputed' });
      expect((await op('dispute-won')).status).toBe(200);
      await reaches(w, id, { payment_status: 'in_escrow' });

      // A dispute lost: the rest went back, and the counters no longer hold any of it.
      expect((await op('dispute')).status).toBe(200);
      await reaches(w, id, { payment_status: 'disputed' });
      expect((await op('dispute-lost')).status).toBe(200);
      await reaches(w, id, { payment_status: 'refunded', amount_refunded: '50.00' });
      expect(await offeringCounters(svc, w)).toEqual(before);
      expect(await paymentEvents(svc, id)).toEqual([
        'payment.refunded',
        'payment.disputed',
        'payment.dispute_won',
        'payment.disputed',
        'payment.dispute_lost',
      ]);
      expect((await auditEntries(svc, id, 'payment.dispute_won'))[0]?.actor_user_id).toBe('processor:sandbox');
      expect((await auditEntries(svc, id, 'payment.dispute_lost'))[0]?.after).toMatchObject({
        payment_status: 'refunded',
      });
    });
  }
});
