import { actor, type Actor } from '../support/fixtures';
import type { http } from '../support/http';
import type { TestService } from '../support/service';
import type { Receiver } from '../webhooks/support/receiver';
import { registerHook } from '../webhooks/support/hooks';
import { stopWebhookStack } from '../webhooks/support/stack';
import { accreditationDocument, expectOk, identityEvents, identityMoves, startIdentityStack } from './support/identity';

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

/** Every KYC and accreditation event of the set, with its data, through the outbox to a webhook. */
describe.each(['A', 'B'] as const)('Set %s: KYC and accreditation events (spec §6.2, §6.3)', (set) => {
  let svc: TestService;
  let receiver: Receiver;
  let api: ReturnType<typeof http>;
  let org: string;
  let staff: Actor;

  beforeAll(async () => {
    ({ svc, receiver, api, staff } = await startIdentityStack(set));
    org = staff.orgId;
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));
  const { provider, decide, gateRow } = identityMoves(() => ({ svc, staff }));

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
    expectOk(
      await api.post(`/identity/accreditations/${a.id}/documents`, approved.token, accreditationDocument()),
      201,
    );
    if (set === 'B') expectOk(await api.post(`/identity/accreditations/${a.id}/submit`, approved.token));
    await decide('accreditations', a.id, 'more_info_needed');
    expectOk(
      await api.post(`/identity/accreditations/${a.id}/documents`, approved.token, accreditationDocument()),
      201,
    );
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
    const doc = expectOk(
      await api.post(`/identity/accreditations/${a.id}/documents`, dan.token, accreditationDocument()),
      201,
    );
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
});
