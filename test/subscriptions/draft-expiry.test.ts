import { actor, approveKyc, createOffering, createSubscription, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { until } from '../support/wait';

/** The short draft lifetime these tests run with, in seconds (production's default is 14 days). */
const TTL_SECONDS = 6;

/**
 * A draft nobody signs ends by itself (docs/decisions/0368-unsigned-drafts-expire.md): its durable
 * timer cancels it with the reason `expired` after SUBSCRIPTION_DRAFT_TTL, and its capacity goes back
 * to the offering, so another investor can subscribe. Signed subscriptions are not expired.
 */
describe.each(['A', 'B'] as const)('Set %s: unsigned drafts expire and free their capacity', (set) => {
  let svc: TestService;
  let api: ReturnType<typeof http>;
  let staff: Actor;
  let alice: Actor;
  let bob: Actor;

  beforeAll(async () => {
    svc = await startService({ set, env: { SUBSCRIPTION_DRAFT_TTL_SECONDS: String(TTL_SECONDS) } });
    api = http(svc.baseUrl);
    const org = newOrg();
    staff = await actor(svc, org, ['staff']);
    alice = await actor(svc, org, ['investor'], { kycCompleted: true });
    bob = await actor(svc, org, ['investor'], { kycCompleted: true });
    await approveKyc(svc, alice);
    await approveKyc(svc, bob);
  }, 120_000);
  afterAll(() => svc?.stop());

  const capped = () =>
    createOffering(api, staff.token, {
      offering: { name: 'Capped', maxAmount: '100.00' },
      securityClass: { name: 'Common', pricePerUnit: '10.00' },
    });
  const read = async (id: string, by: Actor) => (await api.get(`/issuance/subscriptions/${id}`, by.token)).body.data;
  const expired = (id: string, by: Actor) =>
    until(
      `subscription ${id} to expire`,
      () => read(id, by),
      (s) => s.status === 'cancelled',
      { timeoutMs: TTL_SECONDS * 1000 + 30_000, intervalMs: 250 },
    );

  it("frees the offering a never-signed draft filled: another investor's create passes once it expired", async () => {
    const offering = await capped();
    const draft = await createSubscription(api, alice.token, offering, { unitsSubscribed: 10 });
    expect(draft.status).toBe(201);
    const blocked = await createSubscription(api, bob.token, offering, { unitsSubscribed: 1 });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error.code).toBe('OFFERING_FULL');

    const ended = await expired(draft.body.data.id, alice);
    expect(ended).toMatchObject({ status: 'cancelled', status_reason: 'expired', payment_status: 'pending' });
    const offeringNow = (await api.get(`/issuance/offerings/${offering.offeringId}`, staff.token)).body.data;
    expect(offeringNow).toMatchObject({ committed_amount: '0.00', remaining_amount: '100.00' });
    expect((await createSubscription(api, bob.token, offering, { unitsSubscribed: 10 })).status).toBe(201);

    const [event] = await svc.orm.em
      .getConnection()
      .execute(`select data from events where type = 'subscription.cancelled' and data->>'id' = ?`, [
        draft.body.data.id,
      ]);
    expect(event?.data).toMatchObject({ status: 'cancelled', reason: 'expired', cancelled_by: 'expiry' });
    // In the audit trail as the service's own move, like a staff decision or a processor's.
    const audited = await svc.orm.em.getConnection().execute(
      `select action, actor_user_id, outcome, before, after from audit_events
          where subject_id = ? and action = 'subscription.expire' order by seq`,
      [draft.body.data.id],
    );
    expect(audited).toEqual([
      {
        action: 'subscription.expire',
        actor_user_id: 'system:draft-expiry',
        outcome: 'succeeded',
        before: { status: 'draft', expires_at: draft.body.data.expires_at },
        after: { status: 'cancelled', reason: 'expired' },
      },
    ]);
  }, 90_000);

  it('says when a draft expires, and expires one waiting for its signature too', async () => {
    const offering = await capped();
    const created = (await createSubscription(api, alice.token, offering, { unitsSubscribed: 2 })).body.data;
    const lifetime = Date.parse(created.expires_at) - Date.parse(created.created_at);
    expect(lifetime).toBe(TTL_SECONDS * 1000);
    const asked = await api.post(`/issuance/subscriptions/${created.id}/request-signature`, alice.token, {});
    expect(asked.body.data).toMatchObject({ status: 'pending_signature', expires_at: created.expires_at });
    expect(await expired(created.id, alice)).toMatchObject({ status_reason: 'expired' });
    // Too late to sign it now.
    const late = await api.post(`/issuance/subscriptions/${created.id}/sign-agreement`, alice.token, {
      signature: 'Alice',
      signedAt: '2026-11-21T10:00:00Z',
    });
    expect(late.status).toBe(409);
  }, 90_000);

  it('never expires a signed subscription: the signature ends the draft clock', async () => {
    const offering = await capped();
    const signed = (await createSubscription(api, alice.token, offering, { unitsSubscribed: 3 })).body.data;
    const answer = await api.post(`/issuance/subscriptions/${signed.id}/sign-agreement`, alice.token, {
      signature: 'Alice',
      signedAt: '2026-11-21T10:00:00Z',
    });
    expect(answer.status).toBe(200);
    expect(answer.body.data.status).toBe('pending_payment');
    expect(answer.body.data.expires_at).toBeUndefined();
    // A draft made after the signature expires; by then the signed one's deadline has long passed.
    const later = (await createSubscription(api, bob.token, offering, { unitsSubscribed: 1 })).body.data;
    await expired(later.id, bob);
    expect(await read(signed.id, alice)).toMatchObject({ status: 'pending_payment' });
    const offeringNow = (await api.get(`/issuance/offerings/${offering.offeringId}`, staff.token)).body.data;
    expect(offeringNow.committed_amount).toBe('30.00');
  }, 90_000);
});
