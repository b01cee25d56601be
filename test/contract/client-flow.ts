/**
 * Whole Set A and Set B flows written against the types openapi-typescript generates from the
 * served document (test/contract/generated): tsc checks every path, body and answer used here, and
 * client.test.ts runs both against the real stack. This is what an integrator's code looks like.
 */
import createClient from 'openapi-fetch';
import type { paths as SetA } from './generated/set-a';
import type { paths as SetB } from './generated/set-b';
import { until } from '../support/wait';

export interface FlowActors {
  baseUrl: string;
  investor: string;
  staff: string;
}

/** The answer's `data`, or an error that says which call failed and how. */
function must<T>(what: string, r: { data?: { data: T }; error?: unknown; response: Response }): T {
  if (!r.data) throw new Error(`${what}: ${r.response.status} ${JSON.stringify(r.error)}`);
  return r.data.data;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const sessionId = (url: string) => new URL(url).pathname.split('/').pop()!;

/** Set A: card linked by a setup session, approved, collected to escrow; and a wire one reconciled by reference. */
export async function setAFlow(a: FlowActors, idempotencyKey: (step: string) => string) {
  const api = createClient<SetA>({ baseUrl: a.baseUrl });
  const offering = must(
    'create offering',
    await api.POST('/issuance/offerings', {
      headers: bearer(a.staff),
      body: { name: 'Client flow A', currency: 'USD' },
    }),
  );
  const cls = must(
    'create class',
    await api.POST('/issuance/offerings/{offering_id}/security-classes', {
      headers: bearer(a.staff),
      params: { path: { offering_id: offering.id } },
      body: { name: 'Common', pricePerUnit: '20.00' },
    }),
  );
  const endpoint = must(
    'register endpoint',
    await api.POST('/notifications/webhook-endpoints', {
      headers: bearer(a.staff),
      params: { header: { 'Idempotency-Key': idempotencyKey('endpoint') } },
      body: { url: 'https://hooks.invalid/a', eventTypes: ['*'] },
    }),
  );

  const subscribe = async (step: string) => {
    const s = must(
      'create',
      await api.POST('/issuance/offerings/{offering_id}/subscriptions', {
        headers: bearer(a.investor),
        params: { path: { offering_id: offering.id }, header: { 'Idempotency-Key': idempotencyKey(`${step}-create`) } },
        body: { securityClassId: cls.id, unitsSubscribed: 5 },
      }),
    );
    const path = { subscription_id: s.id };
    must(
      'sign',
      await api.POST('/issuance/subscriptions/{subscription_id}/sign-agreement', {
        headers: bearer(a.investor),
        params: { path, header: { 'Idempotency-Key': idempotencyKey(`${step}-sign`) } },
        body: { signature: 'Client Flow', signedAt: new Date().toISOString() },
      }),
    );
    return s;
  };

  // Card: setup session, the investor links the card on the hosted page, finalize, submit, approve.
  const card = await subscribe('card');
  const path = { subscription_id: card.id };
  const session = must(
    'setup session',
    await api.POST('/issuance/subscriptions/{subscription_id}/create-setup-session', {
      headers: bearer(a.investor),
      params: { path },
      body: {
        paymentMethod: 'card',
        successUrl: 'https://return.invalid/ok',
        cancelUrl: 'https://return.invalid/cancel',
      },
    }),
  );
  const page = await api.POST('/sandbox/{kind}/{session_id}/{outcome}', {
    params: { path: { kind: 'setup', session_id: sessionId(session.session_url), outcome: 'complete' } },
    parseAs: 'text',
    redirect: 'manual',
  });
  if (page.response.status !== 303) throw new Error(`setup page: ${page.response.status}`);
  must(
    'finalize',
    await api.POST('/issuance/subscriptions/{subscription_id}/finalize-setup', {
      headers: bearer(a.investor),
      params: { path },
    }),
  );
  must(
    'submit',
    await api.POST('/issuance/subscriptions/{subscription_id}/submit-for-review', {
      headers: bearer(a.investor),
      params: { path },
      body: {},
    }),
  );
  must(
    'approve',
    await api.POST('/issuance/subscriptions/{subscription_id}/approve', {
      headers: bearer(a.staff),
      params: { path, header: { 'Idempotency-Key': idempotencyKey('card-approve') } },
    }),
  );
  const cardDone = await until(
    'the card subscription completed',
    async () =>
      must(
        'get',
        await api.GET('/issuance/subscriptions/{subscription_id}', { headers: bearer(a.investor), params: { path } }),
      ),
    (s) => s.status === 'completed',
  );

  // Wire: submit with the method, staff find it by reference without side effects, approve, reconcile.
  const wire = await subscribe('wire');
  const submitted = must(
    'submit wire',
    await api.POST('/issuance/subscriptions/{subscription_id}/submit-for-review', {
      headers: bearer(a.investor),
      params: { path: { subscription_id: wire.id } },
      body: { paymentMethod: 'wire' },
    }),
  );
  const reference = submitted.reference_code!;
  const found = must(
    'by reference',
    await api.GET('/issuance/subscriptions/by-reference/{reference_code}', {
      headers: bearer(a.staff),
      params: { path: { reference_code: reference } },
    }),
  );
  must(
    'approve wire',
    await api.POST('/issuance/subscriptions/{subscription_id}/approve', {
      headers: bearer(a.staff),
      params: { path: { subscription_id: found.id } },
    }),
  );
  const wireDone = must(
    'reconcile',
    await api.POST('/issuance/reconciliations', {
      headers: bearer(a.staff),
      params: { header: { 'Idempotency-Key': idempotencyKey('reconcile') } },
      body: { referenceCode: reference, amount: found.total_amount },
    }),
  );

  const deliveries = must(
    'deliveries',
    await api.GET('/notifications/webhook-deliveries', {
      headers: bearer(a.staff),
      params: { query: { endpoint_id: endpoint.id, limit: 100 } },
    }),
  );
  return { card: cardDone, wire: wireDone, foundBeforeReconcile: found, endpoint, deliveries: deliveries.items };
}

/** Set B: hosted checkout paid on the sandbox page, approved, shares issued. */
export async function setBFlow(a: FlowActors, idempotencyKey: (step: string) => string) {
  const api = createClient<SetB>({ baseUrl: a.baseUrl });
  const offering = must(
    'create offering',
    await api.POST('/issuance/offerings', {
      headers: bearer(a.staff),
      body: { name: 'Client flow B', currency: 'USD' },
    }),
  );
  const cls = must(
    'create class',
    await api.POST('/issuance/offerings/{offering_id}/security-classes', {
      headers: bearer(a.staff),
      params: { path: { offering_id: offering.id } },
      body: { name: 'Common', pricePerUnit: '7.25' },
    }),
  );
  const endpoint = must(
    'register endpoint',
    await api.POST('/notifications/webhooks', {
      headers: bearer(a.staff),
      params: { header: { 'Idempotency-Key': idempotencyKey('endpoint') } },
      body: { url: 'https://hooks.invalid/b', eventTypes: ['subscription.completed', 'shares.issued'] },
    }),
  );
  const created = must(
    'create',
    await api.POST('/issuance/offerings/{offering_id}/subscriptions', {
      headers: bearer(a.investor),
      params: { path: { offering_id: offering.id }, header: { 'Idempotency-Key': idempotencyKey('create') } },
      body: { securityClassId: cls.id, unitsSubscribed: 4, paymentMethod: 'card' },
    }),
  );
  const path = { subscription_id: created.id };
  must(
    'sign',
    await api.POST('/issuance/subscriptions/{subscription_id}/sign-agreement', {
      headers: bearer(a.investor),
      params: { path },
      body: { signature: 'Client Flow', signedAt: new Date().toISOString() },
    }),
  );
  const checkout = must(
    'checkout',
    await api.POST('/issuance/subscriptions/{subscription_id}/create-checkout-session', {
      headers: bearer(a.investor),
      params: { path, header: { 'Idempotency-Key': idempotencyKey('checkout') } },
      body: {
        paymentMethod: 'card',
        successUrl: 'https://return.invalid/ok',
        cancelUrl: 'https://return.invalid/cancel',
      },
    }),
  );
  const page = await api.POST('/sandbox/{kind}/{session_id}/{outcome}', {
    params: { path: { kind: 'checkout', session_id: sessionId(checkout.session_url), outcome: 'complete' } },
    parseAs: 'text',
    redirect: 'manual',
  });
  if (page.response.status !== 303) throw new Error(`checkout page: ${page.response.status}`);
  await until(
    'the paid subscription in review',
    async () =>
      must(
        'get',
        await api.GET('/issuance/subscriptions/{subscription_id}', { headers: bearer(a.investor), params: { path } }),
      ),
    (s) => s.status === 'pending_review',
  );
  must(
    'approve',
    await api.POST('/issuance/subscriptions/{subscription_id}/approve', { headers: bearer(a.staff), params: { path } }),
  );
  const issued = must(
    'issue shares',
    await api.POST('/issuance/subscriptions/{subscription_id}/issue-shares', {
      headers: bearer(a.staff),
      params: { path, header: { 'Idempotency-Key': idempotencyKey('issue') } },
    }),
  );
  const list = must(
    'list',
    await api.GET('/issuance/subscriptions', { headers: bearer(a.investor), params: { query: { limit: 10 } } }),
  );
  return { issued, endpoint, listed: list.items.map((s) => s.id) };
}
