import { randomUUID } from 'node:crypto';
import { AccessTokens } from '../../../identity/access-tokens';
import { signSandboxBody, SANDBOX_SIGNATURE_HEADER } from '../../../payments/sandbox/signature';
import { sql } from '../../faults/support/subscription-flow';
import { until } from '../../support/wait';
import type { Answers } from './answers';
import type { ServiceGroup } from './service-group';

/** What the driver needs of a running service: its set, where its API answers, its database and its keys. */
export type DrivenService = Pick<ServiceGroup, 'set' | 'baseUrl' | 'databaseUrl' | 'env'>;

/** Every state a subscription waits in for a person or a payment (spec §3), in the order it passes them. */
export const WAITING = ['draft', 'pending_signature', 'pending_payment', 'pending_review', 'approved'] as const;
export type Waiting = (typeof WAITING)[number];

/** Set B's checkout return URLs; nothing follows them here. */
const RETURN_URLS = { successUrl: 'https://investor.example/paid', cancelUrl: 'https://investor.example/cancelled' };

/**
 * Drives subscriptions of one group over HTTP, through its balancer, the way its set goes (Set A by wire,
 * Set B paid at a sandbox checkout): to any waiting state, and from whatever state one is in to
 * `completed`. Every answer is counted in `answers`; anything but the expected status fails the call.
 */
export async function subscriptionDriver(group: DrivenService, answers: Answers) {
  const api = answers.client(group.baseUrl);
  const tokens = await AccessTokens.create({
    privateKeyPem: group.env.ACCESS_TOKEN_PRIVATE_KEY!,
    ttlSeconds: 4 * 3600,
  });
  const org = randomUUID();
  const staff = await tokens.sign({ userId: 'staff-1', orgId: org, roles: ['staff'], kycCompleted: false });
  const investor = await tokens.sign({ userId: 'investor-1', orgId: org, roles: ['investor'], kycCompleted: true });
  // The investor's approved KYC, as the provider's notification records it (both sets' approval reads it).
  await sql(
    group.databaseUrl,
    `insert into kyc_verifications (org_id, user_id, status) values ($1, 'investor-1', 'approved')`,
    [org],
  );
  const expect = async (call: Promise<{ status: number; body: any }>, status: number, what: string) => {
    const res = await call;
    if (res.status !== status)
      throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body?.data;
  };
  const offering = await expect(
    api.post('/issuance/offerings', staff, { name: 'Upgrade', currency: 'USD' }),
    201,
    'offering',
  );
  const cls = await expect(
    api.post(`/issuance/offerings/${offering.id}/security-classes`, staff, { name: 'Common', pricePerUnit: '100.00' }),
    201,
    'class',
  );
  const sessions = new Map<string, string>();
  const referenceCodes = new Map<string, string>();
  /**
   * A command; a 409 INVALID_TRANSITION naming the state before the one the read showed is tried again: the
   * projection reads come from is written just before the workflow takes the state it records, so a command
   * sent at once after a read can meet the workflow a moment behind it (not a roll's doing: it happens
   * without one). Any other answer but 200 fails.
   */
  const op = async (id: string, name: string, token: string, body: unknown = {}) => {
    for (let tries = 1; ; tries++) {
      const res = await api.post(`/issuance/subscriptions/${id}/${name}`, token, body);
      const behind = res.status === 409 && res.body?.error?.code === 'INVALID_TRANSITION' && tries < 20;
      if (!behind) return expect(Promise.resolve(res), 200, `${name} ${id}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const get = (id: string) => expect(api.get(`/issuance/subscriptions/${id}`, investor), 200, `get ${id}`);

  /** One step from `status` towards completed; answers when the subscription has taken it. */
  async function step(id: string, status: string): Promise<void> {
    switch (status) {
      case 'draft':
        return void (await op(id, 'request-signature', investor));
      case 'pending_signature':
        return void (await op(id, 'sign-agreement', investor, {
          signature: 'Ada Lovelace',
          signedAt: new Date().toISOString(),
        }));
      case 'pending_payment':
        if (group.set === 'A') {
          const s = await op(id, 'submit-for-review', investor, { paymentMethod: 'wire' });
          referenceCodes.set(id, s.reference_code);
          return;
        }
        if (!sessions.has(id)) return openCheckout(id);
        return pay(id);
      case 'pending_review':
        return void (await op(id, 'approve', staff));
      case 'approved':
        if (group.set === 'B') return void (await op(id, 'issue-shares', staff));
        return void (await expect(
          api.post(
            '/issuance/reconciliations',
            staff,
            { referenceCode: referenceCodes.get(id), amount: '500.00' },
            // Money moves: a key of its own (docs/decisions/0373-idempotency-key-required-where-money-moves.md).
            { 'Idempotency-Key': `reconcile-${id}` },
          ),
          200,
          `reconcile ${id}`,
        ));
      default:
        throw new Error(`${id}: no step from ${status}`);
    }
  }

  async function openCheckout(id: string): Promise<void> {
    const s = await op(id, 'create-checkout-session', investor, { paymentMethod: 'card', ...RETURN_URLS });
    sessions.set(id, s.session_id);
  }

  /** The sandbox processor's signed `payment.succeeded` for the session; the subscription moves on its own. */
  async function pay(id: string): Promise<void> {
    const body = JSON.stringify({
      id: `evt_paid_${id}`,
      type: 'payment.succeeded',
      created: new Date().toISOString(),
      data: { subscription_id: id, reference: sessions.get(id), amount: '500.00', currency: 'USD' },
    });
    const reply = await api.call('POST', '/payments/sandbox/notifications', {
      raw: body,
      headers: {
        'content-type': 'application/json',
        [SANDBOX_SIGNATURE_HEADER]: signSandboxBody(group.env.SANDBOX_NOTIFICATION_SECRET!, body),
      },
    });
    if (reply.status !== 200) throw new Error(`payment ${id}: ${reply.status} ${JSON.stringify(reply.body)}`);
    await until(`${id} paid`, async () => (await get(id)).status === 'pending_review', { timeoutMs: 120_000 });
  }

  return {
    org,
    staff,
    /** A new subscription brought to `state` (Set B's pending_payment with its checkout open). */
    async to(state: Waiting): Promise<string> {
      const s = await expect(
        api.post(`/issuance/offerings/${offering.id}/subscriptions`, investor, {
          securityClassId: cls.id,
          unitsSubscribed: 5,
        }),
        201,
        'create',
      );
      for (let status = 'draft'; status !== state; status = (await get(s.id)).status) await step(s.id, status);
      if (state === 'pending_payment' && group.set === 'B') await openCheckout(s.id);
      return s.id as string;
    },
    /** Every step left to `completed`. */
    async finish(id: string): Promise<void> {
      for (let status = (await get(id)).status; status !== 'completed'; status = (await get(id)).status)
        await step(id, status);
    },
    status: async (id: string) => (await get(id)).status as string,
  };
}

export type SubscriptionDriver = Awaited<ReturnType<typeof subscriptionDriver>>;
