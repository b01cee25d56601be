import { randomBytes } from 'node:crypto';
import type { AuditRow } from '../../../db/audit-log';
import { PROVIDER_SECRET } from '../../identity/support/identity';
import type { Actor } from '../../support/fixtures';
import { startService, type TestService } from '../../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../../support/subscriptions';
import { until } from '../../support/wait';

/** The webhook secret keys the stack starts with (k1) and a reseal moves to (k2). */
export const [k1, k2] = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')];

/** One behaviour set's stack as the audit-trail tests use it, and an organisation with its actors. */
export async function startAuditStack(set: 'A' | 'B'): Promise<{ svc: TestService; w: LifecycleWorld }> {
  const svc = await startService({
    set,
    env: {
      IDENTITY_PROVIDER_WEBHOOK_SECRET: PROVIDER_SECRET,
      WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
      DEV_IDP_ENABLED: 'true',
      WEBHOOK_SECRET_KEYS: `k1:${k1}`,
    },
    auditCheckpoints: true,
  });
  return { svc, w: await lifecycleWorld(svc) };
}

/** Reads of the trail and the steps the audit-trail tests share; `stack` is read when a test runs. */
export function auditTrailKit(set: 'A' | 'B', stack: () => { svc: TestService; w: LifecycleWorld }) {
  const sql = () => stack().svc.orm.em.getConnection();
  const hooks = () => `/notifications${set === 'A' ? '/webhook-endpoints' : '/webhooks'}`;
  const entries = (where: { action?: string; subject?: string; org?: string } = {}): Promise<AuditRow[]> =>
    sql().execute(
      `select * from audit_events where org_id = ? and (?::text is null or action = ?)
        and (?::text is null or subject_id = ?) order by seq`,
      [
        where.org ?? stack().w.org,
        where.action ?? null,
        where.action ?? null,
        where.subject ?? null,
        where.subject ?? null,
      ],
    );
  /** The one entry of this action on this subject, by this actor, with this outcome. */
  async function one(action: string, subject: string, by: Actor, outcome: 'succeeded' | string = 'succeeded') {
    const found = await entries({ subject });
    expect(found.map((e) => [e.action, e.outcome, e.error_code])).toContainEqual([
      action,
      outcome === 'succeeded' ? 'succeeded' : 'refused',
      outcome === 'succeeded' ? null : outcome,
    ]);
    const matching = found.filter((e) => e.action === action);
    expect(matching).toHaveLength(1);
    const e = matching[0]!;
    expect(e.actor_user_id).toBe(by.userId);
    expect(e.org_id).toBe(by.orgId);
    return e;
  }
  /** Entries written by a workflow's activity land a little after the request that caused them. */
  async function eventuallyOne(
    action: string,
    subject: string,
    by: Actor,
    outcome: 'succeeded' | string = 'succeeded',
  ) {
    await until(`a ${action} entry on ${subject}`, async () =>
      (await entries({ subject })).some((e) => e.action === action),
    );
    return one(action, subject, by, outcome);
  }
  const expectOk = (res: { status: number; body: any }, status = 200) => {
    if (res.status !== status) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  /** Set B: paid by card on the sandbox's checkout page, then waiting for review. */
  async function inReviewByCard() {
    const { w } = stack();
    const s = await w.signed();
    const checkout = expectOk(
      await w.api.post(`/issuance/subscriptions/${s.id}/create-checkout-session`, w.investor.token, {
        paymentMethod: 'card',
        successUrl: 'http://localhost:9/ok',
        cancelUrl: 'http://localhost:9/no',
      }),
    );
    const paid = await fetch(`${checkout.session_url}/complete`, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
    return until(
      `subscription ${s.id} to reach pending_review`,
      async () => expectOk(await w.api.get(`/issuance/subscriptions/${s.id}`, w.investor.token)) as Record<string, any>,
      (now) => now.status === 'pending_review',
      { intervalMs: 150 },
    );
  }
  const inReview = () => (set === 'A' ? stack().w.inReviewByWire() : inReviewByCard());
  return { sql, hooks, entries, one, eventuallyOne, expectOk, inReview };
}
