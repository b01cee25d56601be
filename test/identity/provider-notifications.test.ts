import { actor, type Actor } from '../support/fixtures';
import type { http } from '../support/http';
import type { TestService } from '../support/service';
import type { Receiver } from '../webhooks/support/receiver';
import { stopWebhookStack } from '../webhooks/support/stack';
import { expectOk, identityEvents, notifyAsProvider, startIdentityStack } from './support/identity';

/** The identity provider's notifications: taken only when signed and fresh, each once. */
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
});
