import { DEV_PROVIDER_SECRET, embeddedDefaults } from '../../scripts/lib/embedded-defaults';
import { providerNotify } from '../../scripts/lib/provider-notify';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { until } from '../support/wait';
import { createOffering, createSubscription } from '../support/fixtures';

/**
 * The embedded default: `BEHAVIOUR_SET=B npm start` with nothing else set lets a
 * newcomer go from no token to a completed subscription, following docs/integrators/walkthrough.md "A whole subscription
 * locally" step by step (the service gets exactly what scripts/dev.ts adds to the environment).
 */
describe('Set B on the embedded default, as a newcomer meets it', () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startService({ set: 'B', env: embeddedDefaults({}) });
  }, 120_000);
  afterAll(() => svc?.stop());

  it('completes KYC and a whole subscription with no variables of their own', async () => {
    const api = http(svc.baseUrl);
    const org = '00000000-0000-4000-8000-000000000001';
    const token = async (user: string, role: string, apiKey?: string) => {
      const minted = await api.post('/dev-idp/mint', undefined, {
        user_id: user,
        org_id: org,
        roles: [role],
        api_key: !apiKey,
      });
      expect(minted.status).toBe(200);
      const key = apiKey ?? minted.body.data.api_key;
      const exchanged = await api.post(
        '/identity/auth/exchange',
        undefined,
        { token: minted.body.data.id_token },
        { 'x-api-key': key },
      );
      expect(exchanged.status).toBe(200);
      return { access: exchanged.body.data.access_token as string, key: key as string };
    };

    // 1. Tokens for an investor and a staff member; staff open an offering.
    const alice = await token('alice', 'investor');
    const bob = await token('bob', 'staff', alice.key);
    const offering = await createOffering(api, bob.access, {
      offering: { name: 'Seed' },
      securityClass: { name: 'Common', pricePerUnit: '10.00' },
    });

    // 2. KYC: alice starts a session; the provider (you, with the documented dev secret) reports it.
    const session = await api.post('/identity/kyc', alice.access);
    expect(session.status).toBe(201);
    for (const action of ['pii_submitted', 'approve']) {
      const res = await providerNotify(svc.baseUrl, DEV_PROVIDER_SECRET, {
        kind: 'kyc',
        id: session.body.data.session_id,
        action,
      });
      expect([action, res.status]).toEqual([action, 200]);
    }
    const kycAlice = await token('alice', 'investor', alice.key); // a fresh token carries kyc_completed

    // 3. The subscription: create, sign, pay on the sandbox checkout page, approval, shares.
    const created = await createSubscription(api, kycAlice.access, offering, { unitsSubscribed: 3 });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect(
      (
        await api.post(`/issuance/subscriptions/${id}/sign-agreement`, kycAlice.access, {
          signature: 'Alice',
          signedAt: new Date().toISOString(),
        })
      ).status,
    ).toBe(200);
    const checkout = await api.post(`/issuance/subscriptions/${id}/create-checkout-session`, kycAlice.access, {
      paymentMethod: 'card',
      successUrl: 'http://localhost:9/ok',
      cancelUrl: 'http://localhost:9/no',
    });
    const paid = await fetch(`${checkout.body.data.session_url}/complete`, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(paid.status).toBe(303);
    const status = async () => (await api.get(`/issuance/subscriptions/${id}`, kycAlice.access)).body.data.status;
    expect(await until(`${id} in review`, status, (s) => s === 'pending_review', { intervalMs: 150 })).toBe(
      'pending_review',
    );
    expect((await api.post(`/issuance/subscriptions/${id}/approve`, bob.access)).body.data.status).toBe('approved');
    const done = await api.post(`/issuance/subscriptions/${id}/issue-shares`, bob.access);
    expect(done.body.data).toMatchObject({ status: 'completed', payment_status: 'received', total_amount: '30.00' });
    expect(done.body.data.shares_id).toBeTruthy();
  });
});
