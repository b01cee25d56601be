import { actor, approveKyc, createSubscription, newOrg, openOffering, type Actor } from './fixtures';
import { http } from './http';
import type { TestService } from './service';

/** An organisation with staff, an admin, a KYC-approved investor and an open offering, for lifecycle tests. */
export async function lifecycleWorld(svc: TestService) {
  const api = http(svc.baseUrl);
  const org = newOrg();
  const staff = await actor(svc, org, ['staff']);
  const admin = await actor(svc, org, ['admin']);
  const investor = await actor(svc, org, ['investor'], { kycCompleted: true });
  await approveKyc(svc, investor);
  const offering = await openOffering(svc, staff, '100.00');

  const world = {
    api,
    org,
    staff,
    admin,
    investor,
    offering,
    async create(by: Actor = investor, body: Record<string, unknown> = {}) {
      const res = await createSubscription(api, by.token, offering, body);
      if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data as Record<string, any>;
    },
    post: (id: string, op: string, by: Actor, body?: unknown) =>
      api.post(`/issuance/subscriptions/${id}/${op}`, by.token, body ?? {}),
    sign: (id: string, by: Actor = investor) =>
      api.post(`/issuance/subscriptions/${id}/sign-agreement`, by.token, {
        signature: 'Ada Lovelace',
        signedAt: '2026-11-21T10:00:00Z',
        ipAddress: '203.0.113.7',
      }),
    /** draft -> pending_signature -> pending_payment */
    async signed(by: Actor = investor) {
      const s = await world.create(by);
      await world.post(s.id, 'request-signature', by);
      const signed = await world.sign(s.id, by);
      if (signed.status !== 200) throw new Error(`sign: ${JSON.stringify(signed.body)}`);
      return signed.body.data as Record<string, any>;
    },
    /** Set A: pending_payment -> pending_review by wire. */
    async inReviewByWire(by: Actor = investor) {
      const s = await world.signed(by);
      const res = await world.post(s.id, 'submit-for-review', by, { paymentMethod: 'wire' });
      if (res.status !== 200) throw new Error(`submit: ${JSON.stringify(res.body)}`);
      return res.body.data as Record<string, any>;
    },
    async events(subscriptionId: string): Promise<{ id: string; type: string; data: any; source: string }[]> {
      return svc.orm.em
        .getConnection()
        .execute(
          `select id, type, data, source from events where data->>'id' = ? or data->>'subscription_id' = ? order by seq`,
          [subscriptionId, subscriptionId],
        );
    },
  };
  return world;
}

export type LifecycleWorld = Awaited<ReturnType<typeof lifecycleWorld>>;
