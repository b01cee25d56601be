import { randomUUID } from 'node:crypto';
import { formatAmount, parseAmount } from '../../lib/money';
import { actor, approveKyc } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';

/** Reconciliations and collection retries move money: each under a key of its own (docs/decisions/0373-idempotency-key-required-where-money-moves.md). */
const key = () => ({ 'idempotency-key': randomUUID() });

/** spec §3, Set A wire/check: submit-for-review, staff review, reconciliation to escrow. */
describe('Set A wire and check subscriptions', () => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    svc = await startService({ set: 'A' });
    w = await lifecycleWorld(svc);
  });
  afterAll(() => svc.stop());

  it('submits a wire subscription for review with a reference code to quote in the payment', async () => {
    const s = await w.signed();
    const res = await w.post(s.id, 'submit-for-review', w.investor, { paymentMethod: 'wire' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      status: 'pending_review',
      payment_method: 'wire',
      payment_status: 'pending',
    });
    expect(res.body.data.reference_code).toMatch(
      /^TRN-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{3}$/,
    );
  });

  it('gives every wire or check subscription its own reference code', async () => {
    const codes = await Promise.all([1, 2, 3, 4].map(async (i) => (await w.inReviewByWire()).reference_code));
    expect(new Set(codes).size).toBe(4);
  });

  it('refuses card submission before a payment method is linked', async () => {
    const s = await w.signed();
    const res = await w.post(s.id, 'submit-for-review', w.investor, {});
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('PAYMENT_METHOD_NOT_LINKED');
  });

  it('refuses submit-for-review with a method other than wire or check', async () => {
    const s = await w.signed();
    const res = await w.post(s.id, 'submit-for-review', w.investor, { paymentMethod: 'card' });
    expect(res.status).toBe(422);
    expect(res.body.error.details[0]).toMatchObject({ in: 'body', path: 'paymentMethod' });
  });

  it('refuses cancelling once in review', async () => {
    const s = await w.inReviewByWire();
    const res = await w.api.delete(`/issuance/subscriptions/${s.id}`, w.investor.token);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'NOT_CANCELLABLE', details: { status: 'pending_review' } });
  });

  it('records an information request without changing the status', async () => {
    const s = await w.inReviewByWire();
    const res = await w.post(s.id, 'request-info', w.staff, { reason: 'Please upload proof of address' });
    expect(res.body.data).toMatchObject({ status: 'pending_review', info_requested: 'Please upload proof of address' });
    const e = (await w.events(s.id)).find((x) => x.type === 'subscription.info_requested');
    expect(e?.data.message).toBe('Please upload proof of address');
  });

  it('rejects only with a reason, emitting subscription.rejected', async () => {
    const s = await w.inReviewByWire();
    expect((await w.post(s.id, 'reject', w.staff, {})).status).toBe(422);
    const res = await w.post(s.id, 'reject', w.staff, { reason: 'Source of funds unclear' });
    expect(res.body.data).toMatchObject({ status: 'rejected', status_reason: 'Source of funds unclear' });
    expect((await w.events(s.id)).map((e) => e.type)).toContain('subscription.rejected');
    expect((await w.api.delete(`/issuance/subscriptions/${s.id}`, w.investor.token)).status).toBe(409);
  });

  it('lets only staff approve', async () => {
    const s = await w.inReviewByWire();
    const res = await w.post(s.id, 'approve', w.investor);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('ROLE_REQUIRED');
  });

  it('approves, then completes when staff reconcile the wire: in_escrow, counters, funded and completed events', async () => {
    const before = (await w.api.get(`/issuance/offerings/${w.offering.offeringId}`, w.staff.token)).body.data;
    const s = await w.inReviewByWire();
    const approved = await w.post(s.id, 'approve', w.staff);
    expect(approved.body.data).toMatchObject({ status: 'approved' });

    const wrong = await w.api.post(
      '/issuance/reconciliations',
      w.staff.token,
      {
        referenceCode: s.reference_code,
        amount: '499.99',
      },
      key(),
    );
    expect(wrong.status).toBe(422);
    expect(wrong.body.error).toMatchObject({
      code: 'AMOUNT_MISMATCH',
      details: { expected: '500.00', received: '499.99' },
    });

    const done = await w.api.post(
      '/issuance/reconciliations',
      w.staff.token,
      {
        referenceCode: s.reference_code,
        amount: '500.00',
      },
      key(),
    );
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ id: s.id, status: 'completed', payment_status: 'in_escrow' });
    expect((await w.events(s.id)).map((e) => e.type)).toEqual([
      'subscription.created',
      'subscription.signed',
      'subscription.approved',
      'subscription.funded',
      'subscription.completed',
    ]);
    const after = (await w.api.get(`/issuance/offerings/${w.offering.offeringId}`, w.staff.token)).body.data;
    expect(after.raised_amount).toBe(formatAmount(parseAmount(before.raised_amount, 'USD', 'total') + 50_000n, 'USD'));
    expect(after.investor_count).toBe(before.investor_count + 1);

    const again = await w.api.post(
      '/issuance/reconciliations',
      w.staff.token,
      {
        referenceCode: s.reference_code,
        amount: '500.00',
      },
      key(),
    );
    expect(again.status).toBe(409);
  });

  it('counts an investor once however many of their subscriptions complete', async () => {
    const before = (await w.api.get(`/issuance/offerings/${w.offering.offeringId}`, w.staff.token)).body.data;
    const newcomer = await actor(svc, w.org, ['investor'], { kycCompleted: true });
    await approveKyc(svc, newcomer);
    for (let i = 0; i < 2; i++) {
      const s = await w.inReviewByWire(newcomer);
      await w.post(s.id, 'approve', w.staff);
      await w.api.post(
        '/issuance/reconciliations',
        w.staff.token,
        {
          referenceCode: s.reference_code,
          amount: '500.00',
        },
        key(),
      );
    }
    const after = (await w.api.get(`/issuance/offerings/${w.offering.offeringId}`, w.staff.token)).body.data;
    expect(after.investor_count).toBe(before.investor_count + 1);
    expect(after.raised_amount).toBe(formatAmount(parseAmount(before.raised_amount, 'USD', 'total') + 100_000n, 'USD'));
  });

  it('answers an unknown reference code with 404', async () => {
    const res = await w.api.post(
      '/issuance/reconciliations',
      w.staff.token,
      {
        referenceCode: 'TRN-0000-0000-000',
        amount: '1.00',
      },
      key(),
    );
    expect(res.status).toBe(404);
  });
});
