import { randomUUID } from 'node:crypto';
import { createApiKey } from '../../../identity/api-keys';
import { providerSignature } from '../../../identity';
import { sandboxSecret, signSandboxBody, SANDBOX_SIGNATURE_HEADER } from '../../../payments/sandbox/signature';
import { openCheckout, reaches, RETURN_URLS } from '../../payments/payment-helpers';
import { actor, createOffering, type Actor } from '../../support/fixtures';
import { inReview } from '../../support/in-review';
import type { TestService } from '../../support/service';
import { lifecycleWorld } from '../../support/subscriptions';
import type { Named, Operation } from './hostile-corpus';

/** The verification provider's secret the service is started with, so the test can sign as the provider. */
export const PROVIDER_SECRET = 'hostile-strings-provider-secret-0123456789';

type Stage = 'draft' | 'signed' | 'review' | 'info' | 'paid_and_ended';

/** The state a command on a subscription needs, by the command's path segment; a draft for any other. */
const STAGE_FOR: Record<string, Stage> = {
  'request-signature': 'draft',
  'sign-agreement': 'draft',
  'create-setup-session': 'signed',
  'create-checkout-session': 'signed',
  'submit-for-review': 'signed',
  'finalize-setup': 'signed',
  'retry-collection': 'signed',
  'issue-shares': 'signed',
  approve: 'review',
  reject: 'review',
  'request-info': 'review',
  void: 'review',
  'provide-info': 'info',
  refund: 'paid_and_ended',
};

/**
 * Everything the write operations of one set need to be called as their callers call them: staff,
 * an admin and an investor with approved KYC, an applicant with their own KYC and accreditation
 * records, an API key, a webhook endpoint, an offering with a maximum (where creates commit), and a
 * fresh subscription for each command, in the state that command needs.
 */
export async function hostileWorld(svc: TestService, doc: { paths: Record<string, unknown> }) {
  const w = await lifecycleWorld(svc);
  const applicant = await actor(svc, w.org, ['investor']);
  const capped = await createOffering(w.api, w.staff.token, {
    offering: { name: 'Capped', maxAmount: '1000000.00' },
    securityClass: { name: 'Common', pricePerUnit: '10.00' },
  });
  const apiKey = (await createApiKey(svc.orm.em.fork(), { orgId: w.org, name: 'hostile strings', createdBy: 'test' }))
    .key;
  const endpointsPath = Object.keys(doc.paths).find((p) => /^\/notifications\/webhook(-endpoint)?s$/.test(p))!;
  const endpoint = await w.api.post(endpointsPath, w.staff.token, {
    url: 'http://127.0.0.1:9/hook',
    eventTypes: ['subscription.completed'],
  });
  const kyc = await w.api.post('/identity/kyc', applicant.token, {});
  const accreditation = await w.api.post('/identity/accreditations', applicant.token, { method: 'income' });
  for (const [what, res] of Object.entries({ endpoint, kyc, accreditation }))
    if (res.status !== 201) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  const ids = {
    endpoint: endpoint.body.data.id as string,
    kyc: (kyc.body.data.kyc_case_id ?? kyc.body.data.session_id) as string,
    accreditation: accreditation.body.data.id as string,
  };
  if (svc.set === 'B') {
    // Set B: staff decide a session the provider has put to review, and an accreditation once submitted.
    for (const action of ['pii_submitted', 'requires_review'])
      await expectOk(notifyAsProvider(svc, { kind: 'kyc', id: ids.kyc, action }));
    await expectOk(w.api.post(`/identity/accreditations/${ids.accreditation}/submit`, applicant.token));
  }

  /** The subscriptions this world made, each with the offering it commits to. */
  const subscriptions: string[] = [];
  const perOperation = new Map<string, Promise<string>>();

  async function atStage(stage: Stage): Promise<string> {
    if (stage === 'draft') return (await w.create()).id;
    if (stage === 'signed') return (await w.signed()).id;
    if (stage === 'review') return (await inReview(svc, w)).id;
    if (stage === 'info') {
      const s = await inReview(svc, w);
      const asked = await w.post(s.id, 'request-info', w.staff, { reason: 'Proof of funds, please' });
      if (asked.status !== 200) throw new Error(`request-info: ${asked.status} ${JSON.stringify(asked.body)}`);
      return s.id;
    }
    return paidAndEnded();
  }

  /** Money the sandbox holds for a subscription that ended unfulfilled: what a refund gives back. */
  async function paidAndEnded(): Promise<string> {
    const s = await w.signed();
    const pay = async (sessionUrl: string) => {
      const res = await fetch(`${sessionUrl}/complete`, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(30_000),
      });
      if (res.status !== 303) throw new Error(`pay: ${res.status}`);
    };
    const world = { api: w.api, staff: w.staff, admin: w.admin, investor: w.investor, offering: w.offering };
    if (svc.set === 'B') {
      await pay((await openCheckout(world, s.id)).session_url);
      await reaches(world, s.id, { status: 'pending_review', payment_status: 'received' });
      await expectOk(w.post(s.id, 'reject', w.staff, { reason: 'Not eligible' }));
      return s.id;
    }
    // Set A (SANDBOX_AUTO_SETTLE off): the card's collection begins at approval; voided while it is
    // under way, its money arrives afterwards and is held (test/payments/refunds.test.ts).
    const setup = await w.post(s.id, 'create-setup-session', w.investor, { paymentMethod: 'card', ...RETURN_URLS });
    await pay(setup.body.data.session_url);
    await expectOk(w.post(s.id, 'finalize-setup', w.investor));
    await expectOk(w.post(s.id, 'submit-for-review', w.investor, {}));
    await expectOk(w.post(s.id, 'approve', w.staff));
    await reaches(world, s.id, { payment_status: 'processing' });
    const collections = await w.api.get(
      `/payments/sandbox/operator/collections?subscription_id=${s.id}`,
      w.staff.token,
    );
    await expectOk(w.post(s.id, 'void', w.admin, { reason: 'Withdrawn' }));
    await expectOk(
      w.api.post(`/payments/sandbox/operator/collections/${collections.body.data[0].id}/settle`, w.staff.token),
    );
    await reaches(world, s.id, { payment_status: 'received' });
    return s.id;
  }

  /** A subscription of its own for each operation on one, made once, in the state the operation needs. */
  function subscriptionFor(o: Operation): Promise<string> {
    const key = `${o.method} ${o.path}`;
    let made = perOperation.get(key);
    if (!made) {
      const command = o.path.split('/').pop()!;
      made = atStage(STAGE_FOR[command] ?? 'draft').then((id) => {
        subscriptions.push(id);
        return id;
      });
      perOperation.set(key, made);
    }
    return made;
  }

  /** The value of a path parameter that names something real where the world has it. */
  async function pathValue(o: Operation, name: string): Promise<string> {
    if (name === 'subscription_id') return subscriptionFor(o);
    if (name === 'offering_id') return capped.offeringId;
    if (name === 'id' && o.path.startsWith('/notifications/')) return ids.endpoint;
    if (name === 'id' && o.path.startsWith('/identity/kyc/')) return ids.kyc;
    if (name === 'id' && o.path.startsWith('/identity/accreditations/')) return ids.accreditation;
    // Nobody the world needs: an erasure or a hold on them changes nothing else here.
    if (name === 'user_id') return `user-${randomUUID()}`;
    return randomUUID();
  }

  /** The caller an operation's document names (the first role it accepts), as an Authorization header. */
  function caller(o: Operation): Actor | undefined {
    const role = /Needs the role (\w+)/.exec(o.op.description ?? '')?.[1];
    if (role === 'investor') return o.path.startsWith('/identity/') ? applicant : w.investor;
    if (role === 'staff') return w.staff;
    if (role === 'admin') return w.admin;
    return undefined;
  }

  /**
   * The headers that let a request reach the operation's validation: a bearer token of a role it
   * accepts, or what an operation outside auth() checks instead (an API key, a signature over the body).
   */
  function credentials(o: Operation, rawBody: string): [string, string][] {
    const who = caller(o);
    if (who) return [['Authorization', `Bearer ${who.token}`], ...keyIfRequired(o)];
    if (o.path === '/identity/auth/exchange') return [['X-API-Key', apiKey]];
    if (o.path === '/identity/provider/notifications') {
      const ts = String(Math.floor(Date.now() / 1000));
      return [
        ['X-Provider-Timestamp', ts],
        ['X-Provider-Signature', providerSignature(PROVIDER_SECRET, ts, rawBody)],
      ];
    }
    if (o.path === '/payments/sandbox/notifications')
      return [[SANDBOX_SIGNATURE_HEADER, signSandboxBody(sandboxSecret(svc.config), rawBody)]];
    return [];
  }

  /** A fresh Idempotency-Key where the document says the operation requires one (a route that moves money). */
  function keyIfRequired(o: Operation): [string, string][] {
    const params = (o.op.parameters ?? []) as { in?: string; name?: string; required?: boolean }[];
    const required = params.some((p) => p.in === 'header' && p.name === 'Idempotency-Key' && p.required === true);
    return required ? [['Idempotency-Key', randomUUID()]] : [];
  }

  /** Values a body's required properties take where their schema alone does not say (a real id, a currency). */
  const named: Named = (key, schema) =>
    // A decision the staff may make on a record in review.
    key === 'action' && schema.enum?.includes('approve')
      ? 'approve'
      : {
          securityClassId: capped.securityClassId,
          currency: 'USD',
          pricePerUnit: '10.00',
          amount: '10.00',
          unitsSubscribed: 1,
          eventTypes: ['subscription.completed'],
          content_type: 'application/pdf',
          sha256: '0'.repeat(64),
        }[key];

  return { ...w, capped, subscriptions, pathValue, credentials, named };
}

/** A notification signed as the verification provider signs one. */
async function notifyAsProvider(svc: TestService, body: unknown) {
  const raw = JSON.stringify(body);
  const ts = String(Math.floor(Date.now() / 1000));
  const res = await fetch(`${svc.baseUrl}/identity/provider/notifications`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-provider-timestamp': ts,
      'x-provider-signature': providerSignature(PROVIDER_SECRET, ts, raw),
    },
    body: raw,
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, body: await res.text() };
}

async function expectOk(reply: Promise<{ status: number; body: unknown }>): Promise<void> {
  const res = await reply;
  if (res.status >= 300) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
}

export type HostileWorld = Awaited<ReturnType<typeof hostileWorld>>;
