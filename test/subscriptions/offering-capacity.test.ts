import { actor, approveKyc, createOffering, createSubscription, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';

/**
 * Offering capacity (docs/decisions/0278-offering-capacity-reservations.md): a maximum raise and a
 * minimum investment on an offering or a security class; what subscriptions not cancelled,
 * rejected or voided commit never passes the maximum, even under parallel creates.
 */
describe.each(['A', 'B'] as const)('Set %s: offering capacity', (set) => {
  let svc: TestService;
  let api: ReturnType<typeof http>;
  let staff: Actor;
  let admin: Actor;
  let investor: Actor;

  beforeAll(async () => {
    svc = await startService({ set });
    api = http(svc.baseUrl);
    const org = newOrg();
    staff = await actor(svc, org, ['staff']);
    admin = await actor(svc, org, ['admin']);
    investor = await actor(svc, org, ['investor'], { kycCompleted: true });
    await approveKyc(svc, investor);
  });
  afterAll(() => svc.stop());

  /** An offering at 10.00 a unit, with the bounds given to the offering and to its one class. */
  async function offering(bounds: { offering?: object; cls?: object } = {}) {
    const made = await createOffering(api, staff.token, {
      offering: { name: 'Capped', ...bounds.offering },
      securityClass: { name: 'Common', pricePerUnit: '10.00', ...bounds.cls },
    });
    const ids = { offeringId: made.offeringId, classId: made.securityClassId };
    return {
      ...ids,
      create: (units: number, headers?: Record<string, string>) =>
        createSubscription(api, investor.token, made, { unitsSubscribed: units }, headers),
      read: async () => (await api.get(`/issuance/offerings/${ids.offeringId}`, staff.token)).body.data,
    };
  }

  it('refuses a subscription past the maximum with 409 OFFERING_FULL and what is still available', async () => {
    const o = await offering({ offering: { maxAmount: '100.00' } });
    expect((await o.create(5)).status).toBe(201);
    expect(await o.read()).toMatchObject({
      max_amount: '100.00',
      committed_amount: '50.00',
      remaining_amount: '50.00',
    });
    const over = await o.create(6);
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({
      code: 'OFFERING_FULL',
      details: { bound: 'offering', available_amount: '50.00', max_amount: '100.00', requested_amount: '60.00' },
    });
    expect((await o.create(5)).status).toBe(201);
    expect(await o.read()).toMatchObject({ committed_amount: '100.00', remaining_amount: '0.00' });
    expect((await o.create(0.1)).body.error.details.available_amount).toBe('0.00');
  });

  it('bounds a security class by its own maximum', async () => {
    const o = await offering({ cls: { maxAmount: '20.00' } });
    const res = await o.create(3);
    expect(res.status).toBe(409);
    expect(res.body.error.details).toMatchObject({ bound: 'security_class', available_amount: '20.00' });
    expect((await o.create(2)).status).toBe(201);
    const read = await o.read();
    expect(read.security_classes[0]).toMatchObject({
      max_amount: '20.00',
      committed_amount: '20.00',
      remaining_amount: '0.00',
    });
    expect(read).toMatchObject({ max_amount: null, remaining_amount: null, committed_amount: '20.00' });
  });

  it('refuses a total under the minimum investment with 422 BELOW_MINIMUM_INVESTMENT', async () => {
    const o = await offering({ offering: { minInvestment: '30.00' }, cls: { minInvestment: '25.00' } });
    const res = await o.create(2);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({
      code: 'BELOW_MINIMUM_INVESTMENT',
      details: { minimum_investment: '25.00', total_amount: '20.00', currency: 'USD' },
    });
    expect((await o.create(2.9)).body.error.details.minimum_investment).toBe('30.00');
    expect((await o.create(3)).status).toBe(201);
    // Nothing refused was committed.
    expect((await o.read()).committed_amount).toBe('30.00');
  });

  it('gives capacity back when a subscription is cancelled or voided, never twice', async () => {
    const o = await offering({ offering: { maxAmount: '100.00' } });
    const a = (await o.create(5)).body.data;
    const b = (await o.create(5)).body.data;
    expect((await o.create(1)).status).toBe(409);
    expect((await api.delete(`/issuance/subscriptions/${a.id}`, investor.token)).status).toBe(204);
    await api.delete(`/issuance/subscriptions/${a.id}`, investor.token); // refused: counted once
    expect(await o.read()).toMatchObject({ committed_amount: '50.00', remaining_amount: '50.00' });
    await api.post(`/issuance/subscriptions/${b.id}/sign-agreement`, investor.token, {
      signature: 'Ada',
      signedAt: '2026-11-21T10:00:00Z',
    });
    expect(
      (await api.post(`/issuance/subscriptions/${b.id}/void`, admin.token, { reason: 'wrong signer' })).status,
    ).toBe(200);
    expect(await o.read()).toMatchObject({ committed_amount: '0.00', remaining_amount: '100.00' });
    expect((await o.create(10)).status).toBe(201);
  });

  it('counts a replayed Idempotency-Key once', async () => {
    const o = await offering({ offering: { maxAmount: '50.00' } });
    const key = { 'idempotency-key': `cap-${set}-${Date.now()}` };
    const first = await o.create(5, key);
    const again = await o.create(5, key);
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.body.data.id).toBe(first.body.data.id);
    expect((await o.read()).committed_amount).toBe('50.00');
  });

  it('never oversells: twenty parallel creates against the last two units', async () => {
    const o = await offering({ offering: { maxAmount: '100.00' } });
    expect((await o.create(8)).status).toBe(201);
    const results = await Promise.all(Array.from({ length: 20 }, () => o.create(1)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(2);
    expect(statuses.filter((s) => s === 409)).toHaveLength(18);
    expect(await o.read()).toMatchObject({ committed_amount: '100.00', remaining_amount: '0.00' });
    const [row] = await svc.orm.em
      .getConnection()
      .execute(
        `select count(*)::int as n, sum((state->>'totalAmount')::numeric)::text as total from subscriptions where offering_id = ?`,
        [o.offeringId],
      );
    expect(row).toEqual({ n: 3, total: '100.00' });
  });

  it('checks the bounds staff set: exact in the currency, a minimum within the maximum, changed later by PATCH', async () => {
    const bad = await api.post('/issuance/offerings', staff.token, { name: 'x', currency: 'USD', maxAmount: '10.001' });
    expect(bad.status).toBe(422);
    const inverted = await api.post('/issuance/offerings', staff.token, {
      name: 'x',
      currency: 'USD',
      maxAmount: '10.00',
      minInvestment: '20.00',
    });
    expect(inverted.status).toBe(422);
    const o = await offering();
    expect((await o.create(5)).status).toBe(201);
    // A maximum below what is committed refuses new subscriptions and cancels none.
    const patched = await api.patch(`/issuance/offerings/${o.offeringId}`, staff.token, { maxAmount: '30.00' });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      max_amount: '30.00',
      committed_amount: '50.00',
      remaining_amount: '0.00',
    });
    expect((await o.create(1)).body.error.code).toBe('OFFERING_FULL');
    const lifted = await api.patch(`/issuance/offerings/${o.offeringId}`, staff.token, { maxAmount: null });
    expect(lifted.body.data).toMatchObject({ max_amount: null, remaining_amount: null });
    expect((await o.create(1)).status).toBe(201);
    expect((await api.patch(`/issuance/offerings/${o.offeringId}`, investor.token, { maxAmount: '1.00' })).status).toBe(
      403,
    );
  });
});
