import { actor, newOrg, type Actor } from '../support/fixtures';
import type { http } from '../support/http';
import type { TestService } from '../support/service';
import type { Receiver } from '../webhooks/support/receiver';
import { stopWebhookStack } from '../webhooks/support/stack';
import { accreditationDocument, expectOk, identityMoves, startIdentityStack } from './support/identity';

/** Who may decide a KYC or accreditation record, and in what order. */
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
      expect(
        (await api.post(`/identity/accreditations/${a.id}/documents`, hank.token, accreditationDocument())).status,
      ).toBe(404);
      expect((await api.get(`/identity/accreditations/${a.id}`, staff.token)).body.data.id).toBe(a.id);
    });
  });
});
