import { actor, approveKyc } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';

/** Access: ownership never comes from a role (domain/policy.ts). */
describe.each(['A', 'B'] as const)('Set %s: a user holding investor and staff', (set) => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    svc = await startService({ set });
    w = await lifecycleWorld(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  const both = async () => {
    const a = await actor(svc, w.org, ['investor', 'staff'], { kycCompleted: true });
    await approveKyc(svc, a);
    return a;
  };

  it("cannot sign, cancel or pay another investor's subscription, and the subscription is untouched", async () => {
    const dual = await both();
    const draft = await w.create();
    const signed = await w.signed();
    const sign = await w.sign(draft.id, dual);
    const cancel = await w.api.delete(`/issuance/subscriptions/${signed.id}`, dual.token);
    const pay =
      set === 'A'
        ? await w.post(signed.id, 'submit-for-review', dual, { paymentMethod: 'wire' })
        : await w.post(signed.id, 'create-checkout-session', dual, {
            paymentMethod: 'card',
            successUrl: 'https://i.example/ok',
            cancelUrl: 'https://i.example/no',
          });
    const setup =
      set === 'A'
        ? await w.post(signed.id, 'create-setup-session', dual, {
            paymentMethod: 'card',
            successUrl: 'https://i.example/ok',
            cancelUrl: 'https://i.example/no',
          })
        : await w.post(draft.id, 'request-signature', dual);
    for (const res of [sign, cancel, pay, setup]) {
      expect([res.status, res.body?.error?.code]).toEqual([403, 'NOT_SUBSCRIPTION_OWNER']);
    }
    expect((await w.api.get(`/issuance/subscriptions/${draft.id}`, w.investor.token)).body.data.status).toBe('draft');
    expect((await w.api.get(`/issuance/subscriptions/${signed.id}`, w.investor.token)).body.data).toMatchObject({
      status: 'pending_payment',
      payment_status: 'pending',
    });
  });

  it('still reads the organisation as staff and acts on their own subscription as investor', async () => {
    const dual = await both();
    const other = await w.create();
    expect((await w.api.get(`/issuance/subscriptions/${other.id}`, dual.token)).status).toBe(200);
    const own = await w.create(dual);
    expect((await w.sign(own.id, dual)).body.data.status).toBe('pending_payment');
  });

  it('cannot review their own subscription as staff', async () => {
    if (set === 'B') return; // pending_review in Set B needs a payment; the rule is the same policy line
    const dual = await both();
    const mine = await w.inReviewByWire(dual);
    const approve = await w.post(mine.id, 'approve', dual);
    expect([approve.status, approve.body.error.code]).toEqual([403, 'OWN_SUBSCRIPTION']);
    expect((await w.post(mine.id, 'approve', w.staff)).body.data.status).toBe('approved');
  });

  it('staff without the investor role cannot give investor commands, and investors cannot approve', async () => {
    const s = await w.create();
    const res = await w.sign(s.id, w.staff);
    expect([res.status, res.body.error.code]).toEqual([403, 'ROLE_REQUIRED']);
    const approve = await w.post(s.id, 'approve', w.investor);
    expect([approve.status, approve.body.error.code]).toEqual([403, 'ROLE_REQUIRED']);
  });
});
