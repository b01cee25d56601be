import { createSubscription, newOrg, openOffering, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { apiKeyFor, exchange, notifyAsProvider, PROVIDER_SECRET } from './support/identity';
import { TestIssuer } from './support/test-issuer';

/** The identity side end to end: real ID tokens, the exchange, KYC approval, the subscription gate. */
describe.each(['A', 'B'] as const)('Set %s: the KYC gate and organisation boundaries (spec §5.3)', (set) => {
  let svc: TestService;
  let idp: TestIssuer;
  let api: ReturnType<typeof http>;

  beforeAll(async () => {
    idp = await TestIssuer.start();
    svc = await startService({
      set,
      env: {
        OIDC_ISSUERS: JSON.stringify([idp.config()]),
        IDENTITY_PROVIDER_WEBHOOK_SECRET: PROVIDER_SECRET,
        EXCHANGE_RATE_LIMIT_PER_KEY: '1000',
        EXCHANGE_RATE_LIMIT_PER_ADDRESS: '1000',
      },
    });
    api = http(svc.baseUrl);
  });
  afterAll(async () => {
    await svc.stop();
    await idp.stop();
  });

  /** A user of the organisation, signed in the way a client app does it: ID token + API key -> access token. */
  async function signIn(orgId: string, sub: string, roles: string[]): Promise<Actor> {
    const res = await exchange(svc, await apiKeyFor(svc, orgId), await idp.sign({ sub, roles, orgId }));
    if (res.status !== 200) throw new Error(`exchange: ${JSON.stringify(res.body)}`);
    return { userId: sub, orgId, token: res.body.data.access_token };
  }

  async function approveThroughProvider(investor: Actor): Promise<void> {
    const kyc = (await api.post('/identity/kyc', investor.token)).body.data;
    const steps =
      set === 'A'
        ? [[kyc.current_attempt_id, 'approve']]
        : [
            [kyc.session_id, 'pii_submitted'],
            [kyc.session_id, 'processing'],
            [kyc.session_id, 'approve'],
          ];
    for (const [id, action] of steps)
      expect((await notifyAsProvider(svc, { kind: 'kyc', id, action })).status).toBe(200);
  }

  it('refuses a subscription with 403 KYC_REQUIRED until the KYC is approved, then creates it (201)', async () => {
    const org = newOrg();
    const staff = await signIn(org, 'staff-1', ['staff']);
    const offering = await openOffering(svc, staff);
    let investor = await signIn(org, 'investor-1', ['investor']);
    const create = () => createSubscription(api, investor.token, offering, { unitsSubscribed: 2 });

    const refused = await create();
    expect([refused.status, refused.body.error.code]).toEqual([403, 'KYC_REQUIRED']);

    await approveThroughProvider(investor);
    if (set === 'B') {
      // Set B trusts the token's kyc_completed claim, which is read at exchange time: sign in again.
      expect((await create()).status).toBe(403);
      investor = await signIn(org, 'investor-1', ['investor']);
    }
    const created = await create();
    expect(created.status).toBe(201);
    expect(created.body.data.status).toBe('draft');
  });

  it("keeps one organisation's users away from another's subscriptions (404)", async () => {
    const [orgA, orgB] = [newOrg(), newOrg()];
    const staffA = await signIn(orgA, 'staff-a', ['staff']);
    const offering = await openOffering(svc, staffA);
    const investorA = await signIn(orgA, 'investor-a', ['investor']);
    await approveThroughProvider(investorA);
    const owner = set === 'B' ? await signIn(orgA, 'investor-a', ['investor']) : investorA;
    const sub = await createSubscription(api, owner.token, offering, { unitsSubscribed: 1 });
    expect(sub.status).toBe(201);
    const id = sub.body.data.id;

    // The same user id in another organisation is another person there.
    const intruder = await signIn(orgB, 'investor-a', ['investor']);
    const staffB = await signIn(orgB, 'staff-b', ['staff', 'admin']);
    for (const who of [intruder, staffB]) {
      expect((await api.get(`/issuance/subscriptions/${id}`, who.token)).status).toBe(404);
      expect((await api.get('/issuance/subscriptions', who.token)).body.data.items).toEqual([]);
    }
    expect((await api.delete(`/issuance/subscriptions/${id}`, intruder.token)).status).toBe(404);
    expect((await api.post(`/issuance/subscriptions/${id}/approve`, staffB.token)).status).toBe(404);
    // Nor can one investor of the organisation see another's.
    const neighbour = await signIn(orgA, 'investor-a2', ['investor']);
    expect((await api.get(`/issuance/subscriptions/${id}`, neighbour.token)).status).toBe(404);
    expect((await api.get(`/issuance/subscriptions/${id}`, owner.token)).status).toBe(200);
  });

  it('scopes KYC to the organisation: approval in one does not open the gate in another', async () => {
    const [orgA, orgB] = [newOrg(), newOrg()];
    await approveThroughProvider(await signIn(orgA, 'investor-x', ['investor']));
    const staffB = await signIn(orgB, 'staff-x', ['staff']);
    const offering = await openOffering(svc, staffB);
    const inB = await signIn(orgB, 'investor-x', ['investor']);
    const res = await createSubscription(api, inB.token, offering, { unitsSubscribed: 1 });
    expect([res.status, res.body.error?.code]).toEqual([403, 'KYC_REQUIRED']);
  });
});
