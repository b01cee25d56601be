import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';

/** spec §3, the rows that need no payment processor, in both behaviour sets. */
describe.each(['A', 'B'] as const)('Set %s subscription lifecycle', (set) => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    svc = await startService({ set });
    w = await lifecycleWorld(svc);
  });
  afterAll(() => svc.stop());

  it('creates a draft with payment_status pending and emits subscription.created', async () => {
    const s = await w.create();
    expect(s).toMatchObject({
      status: 'draft',
      payment_status: 'pending',
      total_amount: '500.00',
      price_per_unit: '100.00',
    });
    const events = await w.events(s.id);
    expect(events.map((e) => e.type)).toEqual(['subscription.created']);
    expect(events[0]).toMatchObject({ source: 'service.issuance', data: { id: s.id, status: 'draft' } });
  });

  it('moves draft to pending_signature when the investor asks for the agreement', async () => {
    const s = await w.create();
    const res = await w.post(s.id, 'request-signature', w.investor);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('pending_signature');
  });

  it('signs from pending_signature: pending_payment, signed_at set, subscription.signed', async () => {
    const s = await w.create();
    await w.post(s.id, 'request-signature', w.investor);
    const res = await w.sign(s.id);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      status: 'pending_payment',
      subscription_agreement_signed: true,
      signed_at: '2026-11-21T10:00:00Z',
    });
    expect((await w.events(s.id)).map((e) => e.type)).toEqual(['subscription.created', 'subscription.signed']);
  });

  it('also signs straight from draft', async () => {
    const s = await w.create();
    const res = await w.sign(s.id);
    expect(res.body.data.status).toBe('pending_payment');
  });

  it('refuses signing once the agreement is signed, with 409 INVALID_TRANSITION', async () => {
    const s = await w.signed();
    const res = await w.sign(s.id);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'INVALID_TRANSITION', details: { status: 'pending_payment' } });
  });

  it.each(['draft', 'pending_signature', 'pending_payment'])(
    'cancels from %s with 204 and subscription.cancelled',
    async (from) => {
      const s = await w.create();
      if (from !== 'draft') await w.post(s.id, 'request-signature', w.investor);
      if (from === 'pending_payment') await w.sign(s.id);
      const res = await w.api.delete(`/issuance/subscriptions/${s.id}`, w.investor.token);
      expect(res.status).toBe(204);
      expect(res.body).toBeUndefined();
      const got = await w.api.get(`/issuance/subscriptions/${s.id}`, w.investor.token);
      expect(got.body.data.status).toBe('cancelled');
      expect((await w.events(s.id)).map((e) => e.type)).toContain('subscription.cancelled');
    },
  );

  it('refuses to cancel twice with 409 NOT_CANCELLABLE', async () => {
    const s = await w.create();
    await w.api.delete(`/issuance/subscriptions/${s.id}`, w.investor.token);
    const res = await w.api.delete(`/issuance/subscriptions/${s.id}`, w.investor.token);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('NOT_CANCELLABLE');
  });

  it('refuses approval of a subscription that is not pending_review', async () => {
    const s = await w.create();
    const res = await w.post(s.id, 'approve', w.staff);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      code: 'INVALID_TRANSITION',
      details: { status: 'draft', allowed_from: ['pending_review'] },
    });
  });

  it('voids a signed agreement (admin only) with subscription.voided', async () => {
    const s = await w.signed();
    expect((await w.post(s.id, 'void', w.staff, { reason: 'duplicate' })).status).toBe(403);
    const res = await w.post(s.id, 'void', w.admin, { reason: 'Signed by the wrong person' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'voided', status_reason: 'Signed by the wrong person' });
    const voided = (await w.events(s.id)).find((e) => e.type === 'subscription.voided');
    expect(voided?.data.reason).toBe('Signed by the wrong person');
  });

  it('refuses voiding a draft, which has no agreement yet', async () => {
    const s = await w.create();
    const res = await w.post(s.id, 'void', w.admin, { reason: 'x' });
    expect(res.status).toBe(409);
  });

  it('answers a command on a subscription that does not exist with 404', async () => {
    const res = await w.post('6f1c7c59-7f57-4b8e-9a43-5d0c0f6c1f11', 'approve', w.staff);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});
