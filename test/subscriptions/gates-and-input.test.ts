import { actor, newOrg, subscriptionBody } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';

describe.each(['A', 'B'] as const)('Set %s: KYC gate, validation, idempotency and access', (set) => {
  let svc: TestService;
  let w: LifecycleWorld;
  const path = () => `/issuance/offerings/${w.offering.offeringId}/subscriptions`;

  beforeAll(async () => {
    svc = await startService({ set });
    w = await lifecycleWorld(svc);
  });
  afterAll(() => svc.stop());

  it('refuses creation with 403 KYC_REQUIRED without an approved KYC verification', async () => {
    // Set A checks live (claim ignored even when true); Set B reads the claim.
    const unverified = await actor(svc, w.org, ['investor'], { kycCompleted: set === 'A' });
    if (set === 'B')
      expect(
        (
          await svc.orm.em
            .getConnection()
            .execute('select 1 from kyc_verifications where user_id = ?', [unverified.userId])
        ).length,
      ).toBe(0);
    const res = await w.api.post(path(), unverified.token, {
      securityClassId: w.offering.securityClassId,
      unitsSubscribed: 1,
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('KYC_REQUIRED');
  });

  it('refuses signing with 403 KYC_REQUIRED when the KYC verification was withdrawn', async () => {
    const s = await w.create();
    await svc.orm.em
      .getConnection()
      .execute(`update kyc_verifications set status = 'rejected' where user_id = ?`, [w.investor.userId]);
    const revoked = await actor(svc, w.org, ['investor'], { userId: w.investor.userId, kycCompleted: false });
    try {
      const res = await w.sign(s.id, revoked);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('KYC_REQUIRED');
    } finally {
      await svc.orm.em
        .getConnection()
        .execute(`update kyc_verifications set status = 'approved' where user_id = ?`, [w.investor.userId]);
    }
  });

  it.each([
    ['units of zero', { unitsSubscribed: 0 }, 'unitsSubscribed'],
    ['negative units', { unitsSubscribed: -3 }, 'unitsSubscribed'],
    ['units with more than 6 decimals', { unitsSubscribed: 1.0000001 }, 'unitsSubscribed'],
    ['units as a string', { unitsSubscribed: '5' }, 'unitsSubscribed'],
    ['a security class that is not a UUID', { securityClassId: 'abc' }, 'securityClassId'],
    ['an unknown payment method', { paymentMethod: 'cash' }, 'paymentMethod'],
    ['an unknown field', { price: '1.00' }, ''],
  ])('refuses %s with 422 naming the field', async (_name, patch, field) => {
    const res = await w.api.post(path(), w.investor.token, {
      securityClassId: w.offering.securityClassId,
      unitsSubscribed: 1,
      ...patch,
    });
    expect(res.status).toBe(422);
    expect(res.body.success).toBe(false);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ in: 'body', path: field })]),
    );
  });

  it('refuses malformed JSON with 400 MALFORMED_REQUEST', async () => {
    const res = await w.api.call('POST', path(), {
      token: w.investor.token,
      raw: '{"unitsSubscribed": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('MALFORMED_REQUEST');
  });

  it('refuses a security class of another offering with 422', async () => {
    const res = await w.api.post(path(), w.investor.token, {
      securityClassId: '0b6a3c43-54a1-4a4e-8f54-1e2d3c4b5a69',
      unitsSubscribed: 1,
    });
    expect(res.status).toBe(422);
  });

  it('refuses a sign-agreement without a signature, with a bad timestamp or IP', async () => {
    const s = await w.create();
    const res = await w.api.post(`/issuance/subscriptions/${s.id}/sign-agreement`, w.investor.token, {
      signedAt: 'yesterday',
      ipAddress: '999.1.1.1',
    });
    expect(res.status).toBe(422);
    expect(res.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual([
      'ipAddress',
      'signature',
      'signedAt',
    ]);
  });

  it('gives the same subscription for the same Idempotency-Key and body, and refuses the key with another body', async () => {
    const key = `key-${Date.now()}`;
    const body = subscriptionBody(w.offering.securityClassId, { unitsSubscribed: 2 });
    const first = await w.api.post(path(), w.investor.token, body, { 'idempotency-key': key });
    const second = await w.api.post(
      path(),
      w.investor.token,
      { unitsSubscribed: 2, securityClassId: w.offering.securityClassId },
      { 'idempotency-key': key },
    );
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.data.id).toBe(first.body.data.id);
    const other = await w.api.post(
      path(),
      w.investor.token,
      { ...body, unitsSubscribed: 3 },
      { 'idempotency-key': key },
    );
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await w.events(first.body.data.id)).filter((e) => e.type === 'subscription.created')).toHaveLength(1);
  });

  it('shows investors only their own subscriptions, and staff all of the organisation', async () => {
    const mine = await w.create();
    const other = await actor(svc, w.org, ['investor']);
    expect((await w.api.get(`/issuance/subscriptions/${mine.id}`, other.token)).status).toBe(404);
    expect((await w.api.delete(`/issuance/subscriptions/${mine.id}`, other.token)).status).toBe(404);
    const list = await w.api.get('/issuance/subscriptions', other.token);
    expect(list.body.data).toEqual({ items: [], next_cursor: null });
    const staffView = await w.api.get(`/issuance/subscriptions/${mine.id}`, w.staff.token);
    expect(staffView.status).toBe(200);
  });

  it('hides another organisation’s subscriptions and offerings entirely', async () => {
    const mine = await w.create();
    const outsider = await actor(svc, newOrg(), ['staff', 'admin']);
    expect((await w.api.get(`/issuance/subscriptions/${mine.id}`, outsider.token)).status).toBe(404);
    expect((await w.post(mine.id, 'void', outsider, { reason: 'x' })).status).toBe(404);
    expect((await w.api.get(`/issuance/offerings/${w.offering.offeringId}`, outsider.token)).status).toBe(404);
  });

  it('lists newest first with cursor paging and a status filter', async () => {
    const investor = await actor(svc, w.org, ['investor'], { kycCompleted: true });
    await svc.orm.em
      .getConnection()
      .execute(`insert into kyc_verifications (org_id, user_id, status) values (?, ?, 'approved')`, [
        w.org,
        investor.userId,
      ]);
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await w.create(investor));
    await w.api.delete(`/issuance/subscriptions/${made[0]!.id}`, investor.token);
    const page1 = await w.api.get('/issuance/subscriptions?limit=2', investor.token);
    const page2 = await w.api.get(
      `/issuance/subscriptions?limit=2&cursor=${page1.body.data.next_cursor}`,
      investor.token,
    );
    const page3 = await w.api.get(
      `/issuance/subscriptions?limit=2&cursor=${page2.body.data.next_cursor}`,
      investor.token,
    );
    const ids = [...page1.body.data.items, ...page2.body.data.items, ...page3.body.data.items].map(
      (s: { id: string }) => s.id,
    );
    expect(ids).toEqual(made.map((s) => s.id).reverse());
    expect(page3.body.data.next_cursor).toBeNull();
    const cancelled = await w.api.get('/issuance/subscriptions?status=cancelled', investor.token);
    expect(cancelled.body.data.items.map((s: { id: string }) => s.id)).toEqual([made[0]!.id]);
  });

  it('refuses a cursor it did not hand out with 400 INVALID_CURSOR, rather than starting over', async () => {
    const forged = Buffer.from(JSON.stringify(['2026-11-23T00:00:00.000Z', 'not-a-uuid'])).toString('base64url');
    for (const cursor of ['garbage', forged]) {
      const res = await w.api.get(`/issuance/subscriptions?cursor=${cursor}`, w.staff.token);
      expect([res.status, res.body.error?.code]).toEqual([400, 'INVALID_CURSOR']);
    }
  });

  it('refuses new subscriptions to a closed offering with 409 OFFERING_CLOSED', async () => {
    await w.api.patch(`/issuance/offerings/${w.offering.offeringId}`, w.staff.token, { status: 'closed' });
    try {
      const res = await w.api.post(path(), w.investor.token, {
        securityClassId: w.offering.securityClassId,
        unitsSubscribed: 1,
      });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('OFFERING_CLOSED');
    } finally {
      await w.api.patch(`/issuance/offerings/${w.offering.offeringId}`, w.staff.token, { status: 'open' });
    }
  });
});
