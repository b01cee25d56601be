import { actor, approveKyc, createOffering, createSubscription, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';

/**
 * An offering's cap per investor (docs/decisions/0370-per-investor-cap.md): what one investor's
 * subscriptions not cancelled, rejected or voided hold in the offering never passes `maxPerInvestor`,
 * even when that investor's creates race; other investors are not affected.
 */
describe.each(['A', 'B'] as const)('Set %s: a cap per investor', (set) => {
  let svc: TestService;
  let api: ReturnType<typeof http>;
  let staff: Actor;
  let alice: Actor;
  let bob: Actor;

  beforeAll(async () => {
    svc = await startService({ set });
    api = http(svc.baseUrl);
    const org = newOrg();
    staff = await actor(svc, org, ['staff']);
    alice = await actor(svc, org, ['investor'], { kycCompleted: true });
    bob = await actor(svc, org, ['investor'], { kycCompleted: true });
    await approveKyc(svc, alice);
    await approveKyc(svc, bob);
  }, 120_000);
  afterAll(() => svc?.stop());

  /** An offering at 10.00 a unit with the given bounds. */
  async function offering(bounds: Record<string, unknown>) {
    const made = await createOffering(api, staff.token, {
      offering: { name: 'Capped per investor', ...bounds },
      securityClass: { name: 'Common', pricePerUnit: '10.00' },
    });
    return {
      ...made,
      create: (by: Actor, units: number) => createSubscription(api, by.token, made, { unitsSubscribed: units }),
      read: async () => (await api.get(`/issuance/offerings/${made.offeringId}`, staff.token)).body.data,
    };
  }

  it('refuses what would pass the cap with 409 INVESTOR_LIMIT_REACHED, and says what is left', async () => {
    const o = await offering({ maxAmount: '1000.00', maxPerInvestor: '50.00' });
    expect((await o.read()).max_per_investor).toBe('50.00');
    expect((await o.create(alice, 3)).status).toBe(201);
    const over = await o.create(alice, 3);
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({
      code: 'INVESTOR_LIMIT_REACHED',
      details: {
        bound: 'investor',
        max_per_investor: '50.00',
        held_by_investor: '30.00',
        available_amount: '20.00',
        requested_amount: '30.00',
        currency: 'USD',
      },
    });
    // Another investor has a cap of their own; what was refused holds nothing.
    expect((await o.create(bob, 5)).status).toBe(201);
    expect((await o.create(alice, 2)).status).toBe(201);
    expect((await o.read()).committed_amount).toBe('100.00');
    expect((await o.create(alice, 0.1)).body.error.details.available_amount).toBe('0.00');
  });

  it("never lets one investor's parallel creates pass the cap together", async () => {
    const o = await offering({ maxPerInvestor: '50.00' });
    const results = await Promise.all(Array.from({ length: 20 }, () => o.create(alice, 1)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 409)).toHaveLength(15);
    expect(results.filter((r) => r.status === 409).map((r) => r.body.error.code)).toEqual(
      Array(15).fill('INVESTOR_LIMIT_REACHED'),
    );
    expect((await o.read()).committed_amount).toBe('50.00');
    const [row] = await svc.orm.em.getConnection().execute(
      `select count(*)::int as n, sum(amount)::numeric(19,2)::text as held from offering_commitments
          where offering_id = ? and investor_id = ? and released_at is null`,
      [o.offeringId, alice.userId],
    );
    expect(row).toEqual({ n: 5, held: '50.00' });
  });

  it('counts live subscriptions only: a cancel makes room', async () => {
    const o = await offering({ maxPerInvestor: '40.00' });
    const first = (await o.create(alice, 4)).body.data;
    expect((await o.create(alice, 1)).status).toBe(409);
    expect((await api.delete(`/issuance/subscriptions/${first.id}`, alice.token)).status).toBe(204);
    expect((await o.create(alice, 4)).status).toBe(201);
  });

  it('is set and removed by PATCH, exact in the currency, never below the minimum investment', async () => {
    const o = await offering({});
    expect((await o.read()).max_per_investor).toBeNull();
    expect((await o.create(alice, 6)).status).toBe(201);
    const lowered = await api.patch(`/issuance/offerings/${o.offeringId}`, staff.token, { maxPerInvestor: '50.00' });
    expect(lowered.body.data.max_per_investor).toBe('50.00');
    // Below what Alice holds: her next create is refused; nothing she holds is cancelled.
    expect((await o.create(alice, 1)).body.error.details).toMatchObject({
      held_by_investor: '60.00',
      available_amount: '0.00',
    });
    expect((await o.read()).committed_amount).toBe('60.00');
    const removed = await api.patch(`/issuance/offerings/${o.offeringId}`, staff.token, { maxPerInvestor: null });
    expect(removed.body.data.max_per_investor).toBeNull();
    expect((await o.create(alice, 1)).status).toBe(201);

    for (const body of [{ maxPerInvestor: '10.001' }, { maxPerInvestor: '0' }, { maxPerInvestor: 5 }]) {
      const bad = await api.patch(`/issuance/offerings/${o.offeringId}`, staff.token, body);
      expect([bad.status, bad.body.error.code]).toEqual([422, 'VALIDATION_FAILED']);
    }
    const impossible = await api.post('/issuance/offerings', staff.token, {
      name: 'x',
      currency: 'USD',
      minInvestment: '100.00',
      maxPerInvestor: '50.00',
    });
    expect(impossible.status).toBe(422);
    expect(impossible.body.error.details).toEqual([
      { in: 'body', path: 'minInvestment', message: 'must not be more than maxPerInvestor' },
    ]);
  });
});
