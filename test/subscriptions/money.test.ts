import { randomUUID } from 'node:crypto';
import { createProjectionActivities } from '../../activities/subscription-projection';
import type { SubscriptionState } from '../../domain/subscription';
import { formatAmount, maxAmount, normaliseAmount } from '../../lib/money';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';
import { openOffering } from '../support/fixtures';

/** Money and poison inputs: units, totals and counters. */
describe('money at creation and completion', () => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    svc = await startService({ set: 'A' });
    w = await lifecycleWorld(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  const create = (units: unknown, offering = w.offering) =>
    w.api.post(`/issuance/offerings/${offering.offeringId}/subscriptions`, w.investor.token, {
      securityClassId: offering.securityClassId,
      unitsSubscribed: units,
    });

  it('accepts fractional units up to 6 decimals and computes the total exactly, rounding the cent half up', async () => {
    const half = await create(2.5);
    expect([half.status, half.body.data?.total_amount, half.body.data?.units_subscribed]).toEqual([201, '250.00', 2.5]);
    const odd = await openOffering(svc, w.staff, '12.50');
    // 0.333333 x 12.50 = 4.16666625 -> 4.17; 0.1 is exactly a tenth, not 0.1000000000000000055.
    expect((await create(0.333333, odd)).body.data?.total_amount).toBe('4.17');
    expect((await create(0.1, odd)).body.data?.total_amount).toBe('1.25');
  });

  it('refuses more than 6 decimals with 422', async () => {
    const res = await create(1.1234567);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      expect.objectContaining({ path: 'unitsSubscribed', message: expect.stringMatching(/6 decimals/) }),
    ]);
  });

  it('refuses at create a total too large for its column, with 422 AMOUNT_TOO_LARGE', async () => {
    const dear = await openOffering(svc, w.staff, '9999999.00');
    const res = await create(1_000_000_000, dear);
    expect([res.status, res.body.error?.code]).toEqual([422, 'AMOUNT_TOO_LARGE']);
    const rows = await svc.orm.em
      .getConnection()
      .execute(`select count(*)::int as n from subscriptions where offering_id = ?`, [dear.offeringId]);
    expect(rows[0]?.n).toBe(0);
  });

  it('counts an investor once when two of their subscriptions reach escrow at the same moment', async () => {
    const projection = createProjectionActivities({
      orm: svc.orm,
      set: svc.set,
    });
    const pairs = 12;
    const before = await offering();
    await Promise.all(
      Array.from({ length: pairs }, () => `investor-${randomUUID()}`).flatMap((investor) => [
        projection.recordTransition(completedState(investor), []),
        projection.recordTransition(completedState(investor), []),
      ]),
    );
    const after = await offering();
    expect(after.investor_count - before.investor_count).toBe(pairs);
    expect(after.raised_amount).toBe((Number(before.raised_amount) + pairs * 200).toFixed(2));
  });

  it('raises an offering past what one subscription may total, and reads the sum back to the cent', async () => {
    const projection = createProjectionActivities({
      orm: svc.orm,
      set: svc.set,
    });
    const big = await openOffering(svc, w.staff, '9999999.00');
    const largest = formatAmount(maxAmount('USD'), 'USD');
    const count = 25; // 25 x 999,999,999,999,999.99 overflowed the old numeric(18,2) column
    for (let i = 0; i < count; i++) {
      await projection.recordTransition(
        {
          ...completedState(`investor-${randomUUID()}`),
          offeringId: big.offeringId,
          securityClassId: big.securityClassId,
          totalAmount: largest,
        },
        [],
      );
    }
    expect(await offering(big.offeringId)).toEqual({
      investor_count: count,
      raised_amount: formatAmount(maxAmount('USD') * BigInt(count), 'USD'),
    });
    const read = await w.api.get(`/issuance/offerings/${big.offeringId}`, w.staff.token);
    expect([read.status, read.body.data?.raised_amount]).toEqual([
      200,
      formatAmount(maxAmount('USD') * BigInt(count), 'USD'),
    ]);
  });

  /** A Set A subscription whose funds reached escrow, as the workflow hands it to the projection. */
  function completedState(investorId: string): SubscriptionState {
    return {
      id: randomUUID(),
      set: 'A',
      orgId: w.org,
      offeringId: w.offering.offeringId,
      securityClassId: w.offering.securityClassId,
      trancheId: null,
      investorId,
      unitsSubscribed: 1,
      pricePerUnit: '100.00',
      totalAmount: '100.00',
      currency: 'USD',
      paymentMethod: 'wire',
      paymentStatus: 'in_escrow',
      status: 'completed',
      accreditationStatus: null,
      suitabilityConfirmed: null,
      riskAcknowledgmentSigned: null,
      agreementSigned: true,
      signature: 'x',
      signedAt: null,
      signerIp: null,
      setupSessionId: null,
      paymentMethodLinked: false,
      collectionAttempts: 0,
      checkoutSessionId: null,
      referenceCode: null,
      sharesId: null,
      sharesIssuedAt: null,
      statusReason: null,
      infoRequested: null,
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
      requestHash: null,
      version: 1,
    };
  }

  async function offering(id = w.offering.offeringId): Promise<{ investor_count: number; raised_amount: string }> {
    const [row] = await svc.orm.em
      .getConnection()
      .execute(`select investor_count, raised_amount::text from offerings where id = ?`, [id]);
    const { investor_count, raised_amount } = row as { investor_count: number; raised_amount: string };
    // The column holds four places (every currency's); a USD amount reads back with two.
    return { investor_count, raised_amount: normaliseAmount(raised_amount, 'USD', 'total') };
  }
});
