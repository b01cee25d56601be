import { exchange, notifyAsProvider } from '../identity/support/identity';
import { actor } from '../support/fixtures';
import type { TestService } from '../support/service';
import type { LifecycleWorld } from '../support/subscriptions';
import { auditTrailKit, startAuditStack } from './support/audit-trail';

/**
 * The audit trail (docs/decisions/0204-audit-one-table-one-chain-per-organisation.md; API keys, KYC and
 * accreditation decisions, and console sessions): every audited action, once in each behaviour set, leaves
 * exactly one entry with its actor and outcome; a refusal is recorded as refused. The other subjects are in
 * the audit-trail-*.test.ts files beside this one.
 */
describe.each(['A', 'B'] as const)('Set %s: the audit trail of identity and access', (set) => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    ({ svc, w } = await startAuditStack(set));
  }, 120_000);
  afterAll(() => svc?.stop());

  const { entries, one, expectOk, inReview } = auditTrailKit(set, () => ({ svc, w }));

  it('records API keys issued and revoked, with the admin, the request id, the address and the key acted through', async () => {
    const issued = await w.api.post('/identity/api-keys', w.admin.token, { name: 'backend' });
    const key = expectOk(issued, 201);
    const e = await one('api_key.issue', key.id, w.admin);
    expect(e).toMatchObject({ outcome: 'succeeded', actor_roles: ['admin'], subject_type: 'api_key' });
    expect(e.request_id).toBe(issued.headers.get('x-request-id'));
    expect(e.client_address).toMatch(/127\.0\.0\.1/);
    expect(JSON.stringify(e.after)).not.toContain(key.key.slice(-64));

    // Through a token exchanged with that key, the entry names the key.
    const idToken = expectOk(
      await w.api.post('/dev-idp/mint', undefined, {
        user_id: 'ada',
        org_id: w.org,
        roles: ['admin'],
        api_key: false,
      }),
    ).id_token;
    const viaKey = expectOk(await exchange(svc, key.key, idToken)).access_token as string;
    const second = expectOk(await w.api.post('/identity/api-keys', viaKey, { name: 'second' }), 201);
    expect(
      (await one('api_key.issue', second.id, { userId: 'ada', orgId: w.org, token: viaKey })).actor_api_key_id,
    ).toBe(key.id);

    expect((await w.api.delete(`/identity/api-keys/${second.id}`, w.admin.token)).status).toBe(204);
    const revoked = await one('api_key.revoke', second.id, w.admin);
    expect(revoked.before).toEqual({ revoked_at: null });
    expect(revoked.after).toEqual({ revoked_at: expect.any(String) });

    const missing = '6f1c7c59-7f57-4b8e-9a43-5d0c0f6c1f11';
    expect((await w.api.delete(`/identity/api-keys/${missing}`, w.admin.token)).status).toBe(404);
    await one('api_key.revoke', missing, w.admin, 'NOT_FOUND');
  });

  it('records staff decisions on KYC and accreditations, and refuses (and records) a staff member deciding their own', async () => {
    const investor = await actor(svc, w.org, ['investor']);
    const kyc = expectOk(await w.api.post('/identity/kyc', investor.token), 201);
    const kycId = set === 'A' ? kyc.kyc_case_id : kyc.session_id;
    if (set === 'B') expectOk(await notifyAsProvider(svc, { kind: 'kyc', id: kycId, action: 'processing' }));
    expectOk(await w.api.post(`/identity/kyc/${kycId}/decisions`, w.staff.token, { action: 'approve' }));
    expect((await one('kyc.approve', kycId, w.staff)).after).toEqual({ status: 'approved' });
    // Starting one's own KYC is not a staff decision: not in the trail.
    expect(await entries({ action: 'kyc.start' })).toEqual([]);

    const a = expectOk(await w.api.post('/identity/accreditations', investor.token, { method: 'income' }), 201);
    if (set === 'B') expectOk(await w.api.post(`/identity/accreditations/${a.id}/submit`, investor.token));
    expectOk(
      await w.api.post(`/identity/accreditations/${a.id}/decisions`, w.staff.token, {
        action: 'approve',
        reason: 'ok',
      }),
    );
    expect((await one('accreditation.approve', a.id, w.staff)).after).toEqual({ status: 'approved', reason: 'ok' });

    const both = await actor(svc, w.org, ['investor', 'staff']);
    const own = expectOk(await w.api.post('/identity/kyc', both.token), 201);
    const ownId = set === 'A' ? own.kyc_case_id : own.session_id;
    if (set === 'B') expectOk(await notifyAsProvider(svc, { kind: 'kyc', id: ownId, action: 'processing' }));
    expect((await w.api.post(`/identity/kyc/${ownId}/decisions`, both.token, { action: 'approve' })).status).toBe(403);
    expect(await one('kyc.approve', ownId, both, 'OWN_KYC')).toMatchObject({ after: null });
    const ownA = expectOk(await w.api.post('/identity/accreditations', both.token, { method: 'income' }), 201);
    if (set === 'B') expectOk(await w.api.post(`/identity/accreditations/${ownA.id}/submit`, both.token));
    const refused = await w.api.post(`/identity/accreditations/${ownA.id}/decisions`, both.token, {
      action: 'approve',
    });
    expect(refused.status).toBe(403);
    await one('accreditation.approve', ownA.id, both, 'OWN_ACCREDITATION');
  });

  it('records console sign-ins and sign-outs, and names the console session in what staff do through it', async () => {
    const get = (url: string, cookie?: string) =>
      fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {}, signal: AbortSignal.timeout(30_000) });
    const start = await get(`${svc.baseUrl}/console/auth/start`);
    const pending = start.headers.get('set-cookie')!.split(';')[0]!;
    const asked = new URL(start.headers.get('location')!).searchParams;
    const form = new URLSearchParams({ ...Object.fromEntries(asked), user_id: 'console-reviewer', org_id: w.org });
    form.set('roles', 'staff');
    const authorized = await fetch(`${svc.baseUrl}/dev-idp/authorize`, {
      method: 'POST',
      body: form,
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    const back = new URL(authorized.headers.get('location')!);
    const signedIn = await get(`${svc.baseUrl}/console/auth/callback${back.search}`, pending);
    expect(signedIn.status).toBe(302);
    const session = signedIn.headers
      .getSetCookie()
      .find((c) => c.startsWith('tranche_console='))!
      .split(';')[0]!;
    const reviewer = { userId: 'console-reviewer', orgId: w.org, token: '' };
    const signIn = (await entries({ action: 'console.sign_in' })).filter((e) => e.actor_user_id === reviewer.userId);
    expect(signIn).toHaveLength(1);
    expect(signIn[0]!.actor_session).toEqual(expect.any(String));
    expect(signIn[0]!.subject_id).toBe(signIn[0]!.actor_session);

    const s = await inReview();
    const approved = await fetch(`${svc.baseUrl}/console/subscriptions/${s.id}/approve`, {
      method: 'POST',
      headers: { cookie: session, origin: svc.baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'from=queue',
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(approved.status).toBeLessThan(400);
    expect((await one('subscription.approve', s.id, reviewer)).actor_session).toBe(signIn[0]!.actor_session);

    const out = await fetch(`${svc.baseUrl}/console/auth/sign-out`, {
      method: 'POST',
      headers: { cookie: session, origin: svc.baseUrl },
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(out.status).toBe(303);
    expect((await one('console.sign_out', signIn[0]!.actor_session!, reviewer)).actor_roles).toEqual(['staff']);
  });
});
