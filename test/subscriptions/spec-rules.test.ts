import { inReview } from '../support/in-review';
import { postSandboxEvent, RETURN_URLS } from '../payments/payment-helpers';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';
import { until } from '../support/wait';

/**
 * Spec rules that had no test of their own: approval refused without the investor's approved KYC
 * (spec §3, rule in domain/policy.ts), Set B's `subscription.funded` on payment received (spec §6.2;
 * docs/decisions/0279-set-b-funded-on-payment-received.md) and `shares_issued_at` (spec §2.1).
 */
describe.each(['A', 'B'] as const)("Set %s: approval needs the investor's approved KYC (spec §3)", (set) => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    svc = await startService({ set });
    w = await lifecycleWorld(svc);
  });
  afterAll(() => svc.stop());

  const setKyc = (status: string) =>
    svc.orm.em
      .getConnection()
      .execute('update kyc_verifications set status = ?, updated_at = now() where org_id = ? and user_id = ?', [
        status,
        w.investor.orgId,
        w.investor.userId,
      ]);

  it('refuses approval with 403 KYC_REQUIRED while the KYC is not approved, and approves once it is', async () => {
    const s = await inReview(svc, w);
    await setKyc('rejected');
    try {
      const refused = await w.post(s.id, 'approve', w.staff);
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('KYC_REQUIRED');
      const still = await w.api.get(`/issuance/subscriptions/${s.id}`, w.staff.token);
      expect(still.body.data.status).toBe('pending_review');
      expect((await w.events(s.id)).map((e) => e.type)).not.toContain('subscription.approved');
    } finally {
      await setKyc('approved');
    }
    const approved = await w.post(s.id, 'approve', w.staff);
    expect(approved.status).toBe(200);
    expect(approved.body.data.status).toBe('approved');
  });
});

describe('Set B: payment received and shares issued', () => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    svc = await startService({ set: 'B' });
    w = await lifecycleWorld(svc);
  });
  afterAll(() => svc.stop());

  it('emits subscription.funded once when the payment is received, with status pending_review', async () => {
    const s = await w.signed();
    const checkout = await w.post(s.id, 'create-checkout-session', w.investor, {
      paymentMethod: 'card',
      ...RETURN_URLS,
    });
    expect((await w.events(s.id)).map((e) => e.type)).not.toContain('subscription.funded');
    const paid = { subscription_id: s.id, reference: checkout.body.data.session_id, amount: '500.00', currency: 'USD' };
    await postSandboxEvent(svc, `evt_funded_${s.id}`, 'payment.succeeded', paid);
    await postSandboxEvent(svc, `evt_funded_again_${s.id}`, 'payment.succeeded', paid);
    const reviewed = await inReviewSoon(s.id);
    expect(reviewed).toMatchObject({ status: 'pending_review', payment_status: 'received' });
    // Both notifications were applied (the repeat after the first) before the next command answers.
    await w.post(s.id, 'request-info', w.staff, { reason: 'marker' });
    const events = await w.events(s.id);
    const funded = events.filter((e) => e.type === 'subscription.funded');
    expect(funded).toHaveLength(1);
    expect(funded[0]!.data).toMatchObject({ id: s.id, status: 'pending_review', payment_status: 'received' });
    expect(events.map((e) => e.type)).toEqual([
      'subscription.created',
      'subscription.signed',
      'subscription.funded',
      'subscription.info_requested',
    ]);
  });

  it('sets shares_issued_at when shares are issued: null before, the issue time after, the same in shares.issued', async () => {
    const s = await inReview(svc, w);
    expect(s).toMatchObject({ shares_id: null, shares_issued_at: null });
    const approved = await w.post(s.id, 'approve', w.staff);
    expect(approved.body.data).toMatchObject({ shares_id: null, shares_issued_at: null });
    const before = Date.now();
    const issued = await w.post(s.id, 'issue-shares', w.staff);
    const after = Date.now();
    expect(issued.status).toBe(200);
    const at = issued.body.data.shares_issued_at as string;
    expect(at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
    expect(Date.parse(at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(at)).toBeLessThanOrEqual(after + 1000);
    expect(issued.body.data).toMatchObject({ status: 'completed', shares_id: expect.any(String) });
    const read = await w.api.get(`/issuance/subscriptions/${s.id}`, w.investor.token);
    expect(read.body.data.shares_issued_at).toBe(at);
    const shares = (await w.events(s.id)).find((e) => e.type === 'shares.issued');
    expect(shares?.data).toMatchObject({ issued_at: at, shares_id: issued.body.data.shares_id });
  });

  async function inReviewSoon(id: string): Promise<Record<string, any>> {
    const read = async () => (await w.api.get(`/issuance/subscriptions/${id}`, w.investor.token)).body.data;
    return until(`${id} in review`, read, (got) => got.status === 'pending_review', {
      timeoutMs: 20_000,
      intervalMs: 150,
    });
  }
});
