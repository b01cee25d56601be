import { randomUUID } from 'node:crypto';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { Receiver } from '../webhooks/support/receiver';
import { registerHook } from '../webhooks/support/hooks';
import { identityEvents, notifyAsProvider, PROVIDER_SECRET } from './support/identity';

/** The KYC and accreditation event types of each behaviour set, as spec §6.2 lists them. */
const IDENTITY_EVENT_TYPES = {
  A: [
    'kyc.attempt.created',
    'kyc.attempt.action_required',
    'kyc.attempt.needs_review',
    'kyc.attempt.approved',
    'kyc.attempt.rejected',
    'kyc.case.approved',
    'kyc.case.rejected',
    'kyc.case.resubmission_requested',
    'accreditation.submitted',
    'accreditation.document.uploaded',
    'accreditation.more_info_needed',
    'accreditation.approved',
    'accreditation.denied',
  ],
  B: [
    'kyc.session.created',
    'kyc.session.pii_submitted',
    'kyc.session.processing',
    'kyc.session.approved',
    'kyc.session.denied',
    'kyc.session.requires_review',
    'accreditation.session.created',
    'accreditation.document.uploaded',
    'accreditation.session.submitted',
    'accreditation.session.more_info_needed',
    'accreditation.session.approved',
    'accreditation.session.denied',
  ],
};

const sha = () => randomUUID().replace(/-/g, '').repeat(2);
const document = () => ({ file_name: 'w2-2025.pdf', content_type: 'application/pdf', sha256: sha() });

describe.each(['A', 'B'] as const)('Set %s: KYC and accreditation events (spec §6.2, §6.3)', (set) => {
  let svc: TestService;
  let receiver: Receiver;
  let api: ReturnType<typeof http>;
  let org: string;
  let staff: Actor;

  beforeAll(async () => {
    [svc, receiver] = await Promise.all([
      startService({
        set,
        env: { IDENTITY_PROVIDER_WEBHOOK_SECRET: PROVIDER_SECRET, WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' },
      }),
      Receiver.start(),
    ]);
    api = http(svc.baseUrl);
    org = newOrg();
    staff = await actor(svc, org, ['staff']);
  });
  afterAll(async () => {
    await svc.stop();
    await receiver.stop();
  });

  const expectOk = (res: { status: number; body: any }, status = 200) => {
    if (res.status !== status) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  const provider = async (kind: 'kyc' | 'accreditation', id: string, action: string) =>
    expectOk(await notifyAsProvider(svc, { kind, id, action }));
  const decide = async (kind: 'kyc' | 'accreditations', id: string, action: string) =>
    expectOk(await api.post(`/identity/${kind}/${id}/decisions`, staff.token, { action, reason: 'checked by staff' }));
  const gateRow = async (a: Actor) =>
    (
      await svc.orm.em
        .getConnection()
        .execute('select status from kyc_verifications where org_id = ? and user_id = ?', [a.orgId, a.userId])
    )[0]?.status;

  /** Drives every KYC event of the set through investor, staff and provider endpoints. */
  async function walkKyc(approved: Actor, rejected: Actor) {
    if (set === 'A') {
      let kyc = expectOk(await api.post('/identity/kyc', approved.token), 201);
      expect(kyc).toMatchObject({ user_id: approved.userId, status: 'pending', attempt_status: 'pending' });
      await provider('kyc', kyc.current_attempt_id, 'action_required');
      await provider('kyc', kyc.current_attempt_id, 'needs_review');
      await provider('kyc', kyc.current_attempt_id, 'reject_attempt');
      await decide('kyc', kyc.kyc_case_id, 'request_resubmission');
      expect(await gateRow(approved)).toBe('resubmission_requested');
      kyc = expectOk(await api.post('/identity/kyc', approved.token), 201);
      expect(await provider('kyc', kyc.current_attempt_id, 'approve')).toMatchObject({
        status: 'approved',
        attempt_status: 'approved',
      });
      const other = expectOk(await api.post('/identity/kyc', rejected.token), 201);
      await decide('kyc', other.kyc_case_id, 'reject');
    } else {
      let kyc = expectOk(await api.post('/identity/kyc', approved.token), 201);
      expect(kyc).toMatchObject({ user_id: approved.userId, status: 'created' });
      for (const step of ['pii_submitted', 'processing', 'requires_review'])
        await provider('kyc', kyc.session_id, step);
      await decide('kyc', kyc.session_id, 'deny');
      expect(await gateRow(approved)).toBe('denied');
      kyc = expectOk(await api.post('/identity/kyc', approved.token), 201);
      for (const step of ['pii_submitted', 'processing', 'approve']) await provider('kyc', kyc.session_id, step);
      const other = expectOk(await api.post('/identity/kyc', rejected.token), 201);
      await provider('kyc', other.session_id, 'processing');
      await provider('kyc', other.session_id, 'deny');
    }
  }

  /** Drives every accreditation event of the set. */
  async function walkAccreditation(approved: Actor, denied: Actor) {
    const a = expectOk(await api.post('/identity/accreditations', approved.token, { method: 'income' }), 201);
    expect(a.status).toBe(set === 'A' ? 'submitted' : 'created');
    expectOk(await api.post(`/identity/accreditations/${a.id}/documents`, approved.token, document()), 201);
    if (set === 'B') expectOk(await api.post(`/identity/accreditations/${a.id}/submit`, approved.token));
    await decide('accreditations', a.id, 'more_info_needed');
    expectOk(await api.post(`/identity/accreditations/${a.id}/documents`, approved.token, document()), 201);
    expectOk(await api.post(`/identity/accreditations/${a.id}/submit`, approved.token));
    expect(await provider('accreditation', a.id, 'approve')).toMatchObject({ status: 'approved' });
    const d = expectOk(await api.post('/identity/accreditations', denied.token, { method: 'net_worth' }), 201);
    if (set === 'B') expectOk(await api.post(`/identity/accreditations/${d.id}/submit`, denied.token));
    await decide('accreditations', d.id, 'deny');
  }

  it('emits every KYC and accreditation event type of the set through the outbox, and delivers each to a webhook', async () => {
    const admin = await actor(svc, org, ['admin']);
    const hook = `identity-${set}`;
    await registerHook(svc, receiver, admin, hook, ['*']);
    const [alice, bob] = [await actor(svc, org, ['investor']), await actor(svc, org, ['investor'])];

    await walkKyc(alice, bob);
    await walkAccreditation(alice, bob);

    const events = await identityEvents(svc, org);
    const expected = IDENTITY_EVENT_TYPES[set];
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(expected));
    expect(events.every((e) => e.source === 'service.identity')).toBe(true);
    expect(await gateRow(alice)).toBe('approved');
    expect(await gateRow(bob)).toBe(set === 'A' ? 'rejected' : 'denied');

    const delivered = await receiver.waitFor(hook, events.length, 60_000);
    const bodies = delivered.map((d) => JSON.parse(d.body));
    expect(delivered.every((d) => d.verified)).toBe(true);
    expect(new Set(bodies.map((b) => b.event_type))).toEqual(new Set(expected));
    expect(bodies.every((b) => b.source === 'service.identity' && b.org_id === org && b.version === '1')).toBe(true);
  });

  it('carries the spec §6.3 data on KYC events, scoped to the user', async () => {
    const carol = await actor(svc, org, ['investor']);
    const kyc = expectOk(await api.post('/identity/kyc', carol.token), 201);
    const [created] = (await identityEvents(svc, org)).filter((e) => e.data.user_id === carol.userId);
    if (set === 'A') {
      expect(created).toEqual({
        type: 'kyc.attempt.created',
        source: 'service.identity',
        data: {
          kyc_case_id: kyc.kyc_case_id,
          current_attempt_id: kyc.current_attempt_id,
          user_id: carol.userId,
          status: 'pending',
        },
      });
    } else {
      expect(created).toEqual({
        type: 'kyc.session.created',
        source: 'service.identity',
        data: { session_id: kyc.session_id, user_id: carol.userId, status: 'created' },
      });
    }
  });

  it('names the accreditation and its status in accreditation event data', async () => {
    const dan = await actor(svc, org, ['investor']);
    const a = expectOk(
      await api.post('/identity/accreditations', dan.token, { method: 'professional_certification' }),
      201,
    );
    const doc = expectOk(await api.post(`/identity/accreditations/${a.id}/documents`, dan.token, document()), 201);
    const mine = (await identityEvents(svc, org)).filter((e) => e.data.user_id === dan.userId);
    const idField = set === 'A' ? 'accreditation_id' : 'session_id';
    expect(mine.map((e) => e.data)).toEqual([
      { [idField]: a.id, user_id: dan.userId, status: doc.status, method: 'professional_certification' },
      {
        [idField]: a.id,
        user_id: dan.userId,
        status: doc.status,
        method: 'professional_certification',
        document_id: expect.any(String),
        content_type: 'application/pdf',
      },
    ]);
  });

  describe('provider notifications', () => {
    let target: { kind: 'kyc'; id: string; action: string };
    beforeAll(async () => {
      const erin = await actor(svc, org, ['investor']);
      const kyc = expectOk(await api.post('/identity/kyc', erin.token), 201);
      target = { kind: 'kyc', id: set === 'A' ? kyc.current_attempt_id : kyc.session_id, action: 'processing' };
      if (set === 'A') target.action = 'needs_review';
    });
    const count = async () => (await identityEvents(svc, org)).length;

    it('refuses a wrong signature, a stale timestamp and a missing signature with 401, changing nothing', async () => {
      const before = await count();
      const wrong = await notifyAsProvider(svc, target, { secret: 'another-secret-of-sufficient-length!!' });
      expect([wrong.status, wrong.body.error.code]).toEqual([401, 'PROVIDER_SIGNATURE_INVALID']);
      const stale = await notifyAsProvider(svc, target, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
      expect([stale.status, stale.body.error.code]).toEqual([401, 'PROVIDER_SIGNATURE_EXPIRED']);
      const missing = await api.post('/identity/provider/notifications', undefined, target);
      expect([missing.status, missing.body.error.code]).toEqual([401, 'PROVIDER_SIGNATURE_MISSING']);
      expect(await count()).toBe(before);
    });

    it('applies a repeated notification once', async () => {
      const before = await count();
      expect((await notifyAsProvider(svc, target)).status).toBe(200);
      expect((await notifyAsProvider(svc, target)).status).toBe(200);
      expect(await count()).toBe(before + 1);
    });
  });

  describe('who may move a record', () => {
    it('refuses a decision by an investor (403), by staff of another organisation (404) and out of order (409)', async () => {
      const frank = await actor(svc, org, ['investor']);
      const kyc = expectOk(await api.post('/identity/kyc', frank.token), 201);
      const id = set === 'A' ? kyc.kyc_case_id : kyc.session_id;
      const byInvestor = await api.post(`/identity/kyc/${id}/decisions`, frank.token, { action: 'approve' });
      expect([byInvestor.status, byInvestor.body.error.code]).toEqual([403, 'ROLE_REQUIRED']);
      const outsider = await actor(svc, newOrg(), ['staff']);
      const byOutsider = await api.post(`/identity/kyc/${id}/decisions`, outsider.token, { action: 'approve' });
      expect([byOutsider.status, byOutsider.body.error.code]).toEqual([404, 'NOT_FOUND']);
      expect((await api.get(`/identity/kyc?user_id=${frank.userId}`, outsider.token)).status).toBe(404);
      expect((await api.get(`/identity/kyc?user_id=${frank.userId}`, staff.token)).body.data.user_id).toBe(
        frank.userId,
      );
      const again = await api.post('/identity/kyc', frank.token);
      expect([again.status, again.body.error.code]).toEqual([409, 'KYC_IN_PROGRESS']);
      if (set === 'B') {
        // Set B: only the provider reports the session's progress.
        const early = await api.post(`/identity/kyc/${id}/decisions`, staff.token, { action: 'approve' });
        expect([early.status, early.body.error.code]).toEqual([409, 'KYC_TRANSITION_NOT_ALLOWED']);
        const providerOnly = await api.post(`/identity/kyc/${id}/decisions`, staff.token, { action: 'processing' });
        expect([providerOnly.status, providerOnly.body.error.code]).toEqual([403, 'KYC_ACTION_NOT_ALLOWED']);
      }
    });

    if (set === 'A') {
      it('lets staff reject a case whose requested resubmission never came, and keeps it closed', async () => {
        const ivan = await actor(svc, org, ['investor']);
        const kyc = expectOk(await api.post('/identity/kyc', ivan.token), 201);
        expect(await decide('kyc', kyc.kyc_case_id, 'request_resubmission')).toMatchObject({
          status: 'resubmission_requested',
          attempt_status: 'rejected',
        });
        expect(await decide('kyc', kyc.kyc_case_id, 'reject')).toMatchObject({ status: 'rejected' });
        const again = await api.post('/identity/kyc', ivan.token);
        expect([again.status, again.body.error.code]).toEqual([409, 'KYC_REJECTED']);
        const late = await api.post(`/identity/kyc/${kyc.kyc_case_id}/decisions`, staff.token, { action: 'approve' });
        expect([late.status, late.body.error.code]).toEqual([409, 'KYC_TRANSITION_NOT_ALLOWED']);
        expect(await gateRow(ivan)).toBe('rejected');
      });
    }

    it('refuses anyone deciding their own KYC or accreditation, whatever roles they hold', async () => {
      for (const roles of [
        ['investor', 'staff'],
        ['investor', 'admin'],
      ] as const) {
        const both = await actor(svc, org, [...roles]);
        const kyc = expectOk(await api.post('/identity/kyc', both.token), 201);
        const kycId = set === 'A' ? kyc.kyc_case_id : kyc.session_id;
        // Set B: a session is decidable once the provider has it.
        if (set === 'B') await provider('kyc', kycId, 'processing');
        const ownKyc = await api.post(`/identity/kyc/${kycId}/decisions`, both.token, { action: 'approve' });
        expect([ownKyc.status, ownKyc.body.error?.code]).toEqual([403, 'OWN_KYC']);
        expect(await gateRow(both)).not.toBe('approved');

        const a = expectOk(await api.post('/identity/accreditations', both.token, { method: 'income' }), 201);
        if (set === 'B') expectOk(await api.post(`/identity/accreditations/${a.id}/submit`, both.token));
        const ownAccreditation = await api.post(`/identity/accreditations/${a.id}/decisions`, both.token, {
          action: 'approve',
        });
        expect([ownAccreditation.status, ownAccreditation.body.error?.code]).toEqual([403, 'OWN_ACCREDITATION']);
        expect((await api.get(`/identity/accreditations/${a.id}`, both.token)).body.data.status).toBe('submitted');

        // A colleague decides both.
        expect(await decide('kyc', kycId, 'approve')).toMatchObject({ status: 'approved' });
        expect(await decide('accreditations', a.id, 'approve')).toMatchObject({ status: 'approved' });
      }
    });

    it("keeps an investor out of another investor's accreditation", async () => {
      const [gina, hank] = [await actor(svc, org, ['investor']), await actor(svc, org, ['investor'])];
      const a = expectOk(await api.post('/identity/accreditations', gina.token, { method: 'income' }), 201);
      expect((await api.get(`/identity/accreditations/${a.id}`, hank.token)).status).toBe(404);
      expect((await api.post(`/identity/accreditations/${a.id}/documents`, hank.token, document())).status).toBe(404);
      expect((await api.get(`/identity/accreditations/${a.id}`, staff.token)).body.data.id).toBe(a.id);
    });
  });
});
