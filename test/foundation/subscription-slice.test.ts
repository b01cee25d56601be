import { actor, approveKyc, newOrg, openOffering, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';

describe.each(['A', 'B'] as const)('Set %s: the first vertical slice', (set) => {
  let svc: TestService;
  let api: ReturnType<typeof http>;
  let staff: Actor;
  let investor: Actor;
  let offering: { offeringId: string; securityClassId: string };

  beforeAll(async () => {
    svc = await startService({ set });
    api = http(svc.baseUrl);
    const org = newOrg();
    staff = await actor(svc, org, ['staff']);
    investor = await actor(svc, org, ['investor'], { kycCompleted: true });
    await approveKyc(svc, investor);
    offering = await openOffering(svc, staff, '12.50');
  });
  afterAll(() => svc.stop());

  it('lists the organisation’s offerings newest first, a page at a time, to the last one', async () => {
    const own = await actor(svc, newOrg(), ['staff']);
    const made: string[] = [];
    for (const name of ['Seed', 'Series A', 'Series B'])
      made.push((await api.post('/issuance/offerings', own.token, { name, currency: 'USD' })).body.data.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { status: number; body: any } = await api.get(
        `/issuance/offerings?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        own.token,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.data.items.map((o: { id: string }) => o.id));
      cursor = res.body.data.next_cursor;
    } while (cursor && seen.length < 10);
    expect(seen).toEqual([...made].reverse());
    const bad = await api.get('/issuance/offerings?cursor=garbage', own.token);
    expect([bad.status, bad.body.error?.code]).toEqual([400, 'INVALID_CURSOR']);
  });

  it('creates a draft subscription through HTTP and answers 201 with the fields of spec §2.1', async () => {
    const res = await api.post(`/issuance/offerings/${offering.offeringId}/subscriptions`, investor.token, {
      securityClassId: offering.securityClassId,
      unitsSubscribed: 3,
    });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    const s = res.body.data;
    expect(s).toMatchObject({
      offering_id: offering.offeringId,
      security_class_id: offering.securityClassId,
      units_subscribed: 3,
      price_per_unit: '12.50',
      total_amount: '37.50',
      currency: 'USD',
      payment_status: 'pending',
      subscription_agreement_signed: false,
      status: 'draft',
      signed_at: null,
    });
    expect(s.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(s.created_at).toISOString()).toBe(s.created_at);
    expect(new Date(s.updated_at).toISOString()).toBe(s.updated_at);
    if (set === 'B') expect(s).toMatchObject({ shares_id: null, shares_issued_at: null });
    else expect(s).not.toHaveProperty('shares_id');
  });

  it('returns the subscription from the PostgreSQL projection right after creating it', async () => {
    const created = await api.post(`/issuance/offerings/${offering.offeringId}/subscriptions`, investor.token, {
      securityClassId: offering.securityClassId,
      unitsSubscribed: 7,
    });
    const got = await api.get(`/issuance/subscriptions/${created.body.data.id}`, investor.token);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ success: true, data: created.body.data });
    const row = await svc.orm.em
      .getConnection()
      .execute('select status, version from subscriptions where id = ?', [created.body.data.id]);
    expect(row[0]).toEqual({ status: 'draft', version: 1 });
  });

  it('refuses a request without an access token with 401 in the error envelope', async () => {
    const res = await api.post(`/issuance/offerings/${offering.offeringId}/subscriptions`, undefined, {
      securityClassId: offering.securityClassId,
      unitsSubscribed: 1,
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      success: false,
      error: { code: 'UNAUTHENTICATED', message: expect.any(String), details: null },
    });
  });
});
