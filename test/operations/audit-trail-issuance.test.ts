import { randomUUID } from 'node:crypto';
import { postSandboxEvent } from '../payments/payment-helpers';
import { subscriptionSettled } from '../support/settled';
import type { TestService } from '../support/service';
import type { LifecycleWorld } from '../support/subscriptions';
import { until } from '../support/wait';
import { auditTrailKit, startAuditStack } from './support/audit-trail';

/**
 * The audit trail (docs/decisions/0204-audit-one-table-one-chain-per-organisation.md; subscription
 * decisions and the payments processors report): every audited action, once in each behaviour set, leaves
 * exactly one entry with its actor and outcome; a refusal is recorded as refused. The other subjects are in
 * the audit-trail-*.test.ts files beside this one.
 */
describe.each(['A', 'B'] as const)('Set %s: the audit trail of subscriptions and payments', (set) => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    ({ svc, w } = await startAuditStack(set));
  }, 120_000);
  afterAll(() => svc?.stop());

  const { one, eventuallyOne, expectOk, inReview } = auditTrailKit(set, () => ({ svc, w }));

  /** A subscription a processor's payment applies to: Set A approved (paid by wire), Set B signed and awaiting payment. */
  async function awaitingPayment() {
    if (set === 'B') return w.signed();
    const s = await w.inReviewByWire();
    expectOk(await w.post(s.id, 'approve', w.staff));
    return s;
  }
  const paid = (s: Record<string, any>, event: string, reference: string, amount: string) =>
    postSandboxEvent(svc, `${event}_${s.id}`, 'payment.succeeded', {
      subscription_id: s.id,
      reference,
      amount,
      currency: 'USD',
    }).then((res) => expect(res.status).toBe(200));

  it('records staff decisions on subscriptions with the status before and after, refusals included', async () => {
    const draft = await w.create();
    expect((await w.post(draft.id, 'approve', w.staff)).status).toBe(409);
    expect(await one('subscription.approve', draft.id, w.staff, 'INVALID_TRANSITION')).toMatchObject({
      before: { status: 'draft' },
      after: null,
    });

    const signed = await w.signed();
    // Refused at the door (auth(): the route needs a role the caller lacks): no decision was made, no entry.
    expect((await w.post(signed.id, 'void', w.staff, { reason: 'duplicate' })).status).toBe(403);
    expectOk(await w.post(signed.id, 'void', w.admin, { reason: 'Signed by the wrong person' }));
    expect((await one('subscription.void', signed.id, w.admin)).after).toEqual({ status: 'voided' });

    const reviewed = await inReview();
    expectOk(await w.post(reviewed.id, 'request-info', w.staff, { reason: 'proof of address' }));
    await one('subscription.request_info', reviewed.id, w.staff);
    expectOk(await w.post(reviewed.id, 'approve', w.staff));
    const approved = await one('subscription.approve', reviewed.id, w.staff);
    expect([approved.before, approved.after]).toEqual([{ status: 'pending_review' }, { status: 'approved' }]);
    if (set === 'A') {
      expectOk(
        await w.api.post(
          '/issuance/reconciliations',
          w.staff.token,
          { referenceCode: reviewed.reference_code, amount: reviewed.total_amount },
          { 'idempotency-key': randomUUID() },
        ),
      );
      expect((await one('subscription.reconcile', reviewed.id, w.staff)).after).toEqual({ status: 'completed' });
      // A reference code that names nothing: refused, and the entry names the code.
      const unknown = await w.api.post(
        '/issuance/reconciliations',
        w.staff.token,
        { referenceCode: 'TRN-ZZZZ-ZZZZ-ZZZ', amount: '1.00' },
        { 'idempotency-key': randomUUID() },
      );
      expect(unknown.status).toBeGreaterThanOrEqual(400);
      const refusedReconcile = await one(
        'subscription.reconcile',
        'TRN-ZZZZ-ZZZZ-ZZZ',
        w.staff,
        unknown.body.error.code,
      );
      expect(refusedReconcile.subject_type).toBe('reference_code');
    } else {
      expectOk(await w.post(reviewed.id, 'issue-shares', w.staff));
      expect((await one('subscription.issue_shares', reviewed.id, w.staff)).after).toEqual({ status: 'completed' });
    }

    const rejected = await inReview();
    expectOk(await w.post(rejected.id, 'reject', w.staff, { reason: 'sanctions list' }));
    expect((await one('subscription.reject', rejected.id, w.staff)).after).toEqual({ status: 'rejected' });
  });

  it('records held payments, refunds and disputes, with the processor as the actor and the notification request', async () => {
    const s = await w.signed();
    expectOk(await w.post(s.id, 'void', w.admin, { reason: 'Signed by the wrong person' }));
    const processor = { userId: 'processor:sandbox', orgId: w.org, token: '' };
    const notify = async (event: string, type: string) =>
      expect(
        (
          await postSandboxEvent(svc, `${event}_${s.id}`, type, {
            subscription_id: s.id,
            reference: `late-${s.id}`,
            amount: s.total_amount,
            currency: 'USD',
          })
        ).status,
      ).toBe(200);

    // Money that still arrives for a voided subscription is held for staff to refund.
    await notify('evt_late', 'payment.succeeded');
    const held = await eventuallyOne('payment.hold', s.id, processor);
    expect(held).toMatchObject({
      subject_type: 'subscription',
      actor_roles: ['system'],
      actor_api_key_id: null,
      actor_session: null,
      before: { payment_status: 'pending' },
      after: { payment_status: 'received', amount: s.total_amount, reason: expect.stringMatching(/held/) },
    });
    expect(held.client_address).toMatch(/127\.0\.0\.1/);
    expect(held.request_id).toEqual(expect.any(String));
    await notify('evt_refund', 'payment.refunded');
    const refund = await eventuallyOne('payment.refund', s.id, processor);
    expect([refund.before, refund.after]).toEqual([
      { payment_status: 'received' },
      expect.objectContaining({ payment_status: 'refunded' }),
    ]);
    await notify('evt_dispute', 'payment.disputed');
    expect((await eventuallyOne('payment.dispute', s.id, processor)).after).toMatchObject({
      payment_status: 'disputed',
    });
    // The same notification told again changes nothing, and adds no entry.
    await notify('evt_dispute', 'payment.disputed');
    await subscriptionSettled(svc, s.id);
    await one('payment.dispute', s.id, processor);
  });

  it('records a second payment, once the total is paid, held with the processor as the actor', async () => {
    const s = await awaitingPayment();
    const processor = { userId: 'processor:sandbox', orgId: w.org, token: '' };
    await paid(s, 'evt_first', `first-${s.id}`, s.total_amount);
    const paymentStatus = async () =>
      expectOk(await w.api.get(`/issuance/subscriptions/${s.id}`, w.investor.token)).payment_status;
    await until(`the first payment of ${s.id} received`, paymentStatus, (status) => status === 'received');
    await paid(s, 'evt_second', `second-${s.id}`, s.total_amount);
    const held = await eventuallyOne('payment.hold', s.id, processor);
    expect(held).toMatchObject({
      subject_type: 'subscription',
      actor_roles: ['system'],
      actor_api_key_id: null,
      actor_session: null,
      after: { reference: `second-${s.id}`, reason: expect.stringMatching(/second payment/) },
    });
    // The same second payment told again is held once: still one entry.
    await paid(s, 'evt_second_again', `second-${s.id}`, s.total_amount);
    await subscriptionSettled(svc, s.id);
    await one('payment.hold', s.id, processor);
  });

  it('records a payment of another amount than the total, held with the processor as the actor', async () => {
    const s = await awaitingPayment();
    const processor = { userId: 'processor:sandbox', orgId: w.org, token: '' };
    await paid(s, 'evt_short', `short-${s.id}`, '1.00');
    const held = await eventuallyOne('payment.hold', s.id, processor);
    expect(held).toMatchObject({
      subject_type: 'subscription',
      actor_roles: ['system'],
      actor_api_key_id: null,
      actor_session: null,
      after: { amount: '1.00', reference: `short-${s.id}`, reason: expect.stringMatching(/but the total is/) },
    });
    expect(held.client_address).toMatch(/127\.0\.0\.1/);
  });
});
