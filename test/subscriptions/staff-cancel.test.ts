import { startService, type TestService } from '../support/service';
import { actor, approveKyc, createOffering, createSubscription, type Actor } from '../support/fixtures';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';

/**
 * Staff and admins end a subscription that has not reached review, with a reason
 * (docs/decisions/0369-staff-cancel-before-review.md): `POST /issuance/subscriptions/{id}/cancel`.
 * The investor's DELETE stays the investor's; the decision is audited, the capacity goes back and
 * `subscription.cancelled` says who ended it and why.
 */
describe.each(['A', 'B'] as const)('Set %s: staff cancel a subscription before review', (set) => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    svc = await startService({ set });
    w = await lifecycleWorld(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  const cancel = (id: string, by: Actor, body: unknown = { reason: 'Abandoned: no answer for a month' }) =>
    w.post(id, 'cancel', by, body);
  const audit = (subjectId: string) =>
    svc.orm.em.getConnection().execute(
      `select action, actor_user_id, outcome, error_code, before, after from audit_events
          where subject_id = ? and action = 'subscription.staff_cancel' order by seq`,
      [subjectId],
    );

  it('ends a never-signed draft that fills the offering, which the investor alone could end before', async () => {
    const offering = await createOffering(w.api, w.staff.token, {
      offering: { name: 'Capped', maxAmount: '125.00' },
      securityClass: { name: 'Common', pricePerUnit: '12.50' },
    });
    const draft = (await createSubscription(w.api, w.investor.token, offering, { unitsSubscribed: 10 })).body.data;
    const other = await actor(svc, w.org, ['investor'], { kycCompleted: true });
    await approveKyc(svc, other);
    expect((await createSubscription(w.api, other.token, offering, { unitsSubscribed: 1 })).status).toBe(409);

    // The investor's DELETE stays the investor's, and a draft is not voidable.
    expect((await w.api.delete(`/issuance/subscriptions/${draft.id}`, w.staff.token)).status).toBe(403);
    expect((await w.post(draft.id, 'void', w.admin, { reason: 'x' })).status).toBe(409);

    const res = await cancel(draft.id, w.staff);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'cancelled', status_reason: 'Abandoned: no answer for a month' });
    const read = (await w.api.get(`/issuance/offerings/${offering.offeringId}`, w.staff.token)).body.data;
    expect(read).toMatchObject({ committed_amount: '0.00', remaining_amount: '125.00' });
    const events = await w.events(draft.id);
    expect(events.map((e) => e.type)).toEqual(['subscription.created', 'subscription.cancelled']);
    expect(events[1]!.data).toMatchObject({
      status: 'cancelled',
      reason: 'Abandoned: no answer for a month',
      cancelled_by: 'staff',
    });
    expect(await audit(draft.id)).toEqual([
      {
        action: 'subscription.staff_cancel',
        actor_user_id: w.staff.userId,
        outcome: 'succeeded',
        error_code: null,
        before: { status: 'draft' },
        after: { status: 'cancelled', reason: 'Abandoned: no answer for a month' },
      },
    ]);
  });

  it('cancels from pending_signature (admin) and pending_payment (staff), and never once in review', async () => {
    const asked = await w.create();
    await w.post(asked.id, 'request-signature', w.investor);
    expect((await cancel(asked.id, w.admin)).body.data.status).toBe('cancelled');

    const signed = await w.signed();
    expect((await cancel(signed.id, w.staff)).body.data).toMatchObject({
      status: 'cancelled',
      subscription_agreement_signed: true,
    });
    // Twice: the second is refused, and the refusal is audited too.
    const again = await cancel(signed.id, w.staff);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('NOT_CANCELLABLE');
    expect((await audit(signed.id)).map((a) => [a.outcome, a.error_code])).toEqual([
      ['succeeded', null],
      ['refused', 'NOT_CANCELLABLE'],
    ]);

    if (set === 'A') {
      const reviewed = await w.inReviewByWire();
      const refused = await cancel(reviewed.id, w.staff);
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({
        code: 'NOT_CANCELLABLE',
        details: { status: 'pending_review', allowed_from: ['draft', 'pending_signature', 'pending_payment'] },
      });
    }
  });

  it('needs a reason, a staff or admin role, and another person than the investor', async () => {
    const draft = await w.create();
    for (const body of [{}, { reason: '   ' }, { reason: 'x'.repeat(2001) }, { reason: 'ok', extra: 1 }]) {
      const res = await cancel(draft.id, w.staff, body);
      expect([res.status, res.body.error.code]).toEqual([422, 'VALIDATION_FAILED']);
    }
    const byInvestor = await cancel(draft.id, w.investor);
    expect([byInvestor.status, byInvestor.body.error.code]).toEqual([403, 'ROLE_REQUIRED']);
    // A staff member who is also the investor uses DELETE, like any investor.
    const both = await actor(svc, w.org, ['investor', 'staff'], { kycCompleted: true });
    await approveKyc(svc, both);
    const own = await w.create(both);
    const self = await cancel(own.id, both);
    expect([self.status, self.body.error.code]).toEqual([403, 'OWN_SUBSCRIPTION']);
    // Another organisation's staff do not see it.
    const stranger = await actor(svc, crypto.randomUUID(), ['staff']);
    expect((await cancel(draft.id, stranger)).status).toBe(404);
    expect((await w.api.get(`/issuance/subscriptions/${draft.id}`, w.investor.token)).body.data.status).toBe('draft');
  });
});
