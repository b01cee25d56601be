import { randomUUID } from 'node:crypto';
import { startService, type TestService } from '../support/service';
import { reaches, postSandboxEvent, signedSubscription, subscription, world, type World } from './payment-helpers';
import { subscriptionSettled } from '../support/settled';

/** Reconciliations and collection retries move money: each under a key of its own (docs/decisions/0373-idempotency-key-required-where-money-moves.md). */
const key = () => ({ 'idempotency-key': randomUUID() });

const SUCCESS = 'https://investor.example/linked';
const CANCEL = 'https://investor.example/cancelled';

async function linkCard(w: World, id: string): Promise<{ session_id: string; session_url: string }> {
  const res = await w.api.post(`/issuance/subscriptions/${id}/create-setup-session`, w.investor.token, {
    paymentMethod: 'card',
    successUrl: SUCCESS,
    cancelUrl: CANCEL,
  });
  expect(res.status).toBe(200);
  const session = res.body.data;
  const done = await fetch(`${session.session_url}/complete`, {
    method: 'POST',
    redirect: 'manual',
    signal: AbortSignal.timeout(30_000),
  });
  expect([done.status, done.headers.get('location')]).toEqual([303, SUCCESS]);
  return session;
}

async function approved(w: World, id: string): Promise<void> {
  expect((await w.api.post(`/issuance/subscriptions/${id}/finalize-setup`, w.investor.token)).status).toBe(200);
  expect(
    (await w.api.post(`/issuance/subscriptions/${id}/submit-for-review`, w.investor.token, {})).body.data.status,
  ).toBe('pending_review');
  expect((await w.api.post(`/issuance/subscriptions/${id}/approve`, w.staff.token)).body.data.status).toBe('approved');
}

async function eventTypes(svc: TestService, id: string): Promise<string[]> {
  const rows: { type: string }[] = await svc.orm.em
    .getConnection()
    .execute(`select type from events where data->>'id' = ? order by seq`, [id]);
  return rows.map((r) => r.type);
}

/** Set A card through the sandbox: link a card, approval, collection to escrow as the processor reports. */
describe('Set A with the sandbox processor, settlement by the operator', () => {
  let svc: TestService;
  let w: World;

  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { SANDBOX_AUTO_SETTLE: 'false' } });
    w = await world(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  const collections = async (id: string) =>
    (await w.api.get(`/payments/sandbox/operator/collections?subscription_id=${id}`, w.staff.token)).body.data as {
      id: string;
      status: string;
      amount: string;
    }[];

  it('refuses finalize-setup until the setup page is completed, then links the card', async () => {
    const id = await signedSubscription(w, 4);
    const res = await w.api.post(`/issuance/subscriptions/${id}/create-setup-session`, w.investor.token, {
      paymentMethod: 'us_bank_account',
      successUrl: SUCCESS,
      cancelUrl: CANCEL,
    });
    expect(res.body.data.session_url).toBe(`${svc.config.PUBLIC_BASE_URL}/sandbox/setup/${res.body.data.session_id}`);
    const early = await w.api.post(`/issuance/subscriptions/${id}/finalize-setup`, w.investor.token);
    expect([early.status, early.body.error.code]).toEqual([409, 'SETUP_INCOMPLETE']);
    await fetch(`${res.body.data.session_url}/complete`, { method: 'POST', redirect: 'manual' });
    expect((await w.api.post(`/issuance/subscriptions/${id}/finalize-setup`, w.investor.token)).status).toBe(200);
  });

  it('collects after approval: processing, then received and in_escrow once settled, completed with funded and completed events', async () => {
    const id = await signedSubscription(w, 4);
    await linkCard(w, id);
    await approved(w, id);
    await reaches(w, id, { status: 'approved', payment_status: 'processing' });
    const [collection] = await collections(id);
    expect(collection).toMatchObject({ status: 'processing', amount: '50.00' });

    const settled = await w.api.post(`/payments/sandbox/operator/collections/${collection!.id}/settle`, w.staff.token);
    expect(settled.body.data.status).toBe('in_escrow');
    await reaches(w, id, { status: 'completed', payment_status: 'in_escrow' });
    const types = await eventTypes(svc, id);
    expect(types).toEqual(
      expect.arrayContaining(['subscription.approved', 'subscription.funded', 'subscription.completed']),
    );
    expect(types.filter((t) => t === 'subscription.funded')).toHaveLength(1);
    expect(await collections(id)).toHaveLength(1); // collected once
  });

  it('reaches escrow when in_escrow arrives before succeeded, and ignores the late success', async () => {
    const id = await signedSubscription(w, 2);
    await linkCard(w, id);
    await approved(w, id);
    await reaches(w, id, { payment_status: 'processing' });
    const [collection] = await collections(id);
    const data = { subscription_id: id, reference: collection!.id, amount: '25.00', currency: 'USD' };
    await postSandboxEvent(svc, `evt_escrow_first_${id}`, 'payment.in_escrow', data);
    await reaches(w, id, { status: 'completed', payment_status: 'in_escrow' });
    await postSandboxEvent(svc, `evt_success_late_${id}`, 'payment.succeeded', data);
    await subscriptionSettled(svc, id);
    expect(await subscription(w, id)).toMatchObject({ status: 'completed', payment_status: 'in_escrow' });
    expect((await eventTypes(svc, id)).filter((t) => t === 'subscription.completed')).toHaveLength(1);
  });

  it('shows payment failed when the collection fails, leaving the subscription approved', async () => {
    const id = await signedSubscription(w, 2);
    await linkCard(w, id);
    await approved(w, id);
    await reaches(w, id, { payment_status: 'processing' });
    const [collection] = await collections(id);
    expect(
      (
        await w.api.post(`/payments/sandbox/operator/collections/${collection!.id}/fail`, w.staff.token, {
          reason: 'insufficient_funds',
        })
      ).status,
    ).toBe(200);
    await reaches(w, id, { status: 'approved', payment_status: 'failed' });
    // The operator cannot settle a failed collection.
    expect(
      (await w.api.post(`/payments/sandbox/operator/collections/${collection!.id}/settle`, w.staff.token)).status,
    ).toBe(409);

    // Staff ask again: a second collection, under a new idempotency key, reaches escrow.
    expect(
      (await w.api.post(`/issuance/subscriptions/${id}/retry-collection`, w.investor.token, {}, key())).status,
    ).toBe(403);
    const retried = await w.api.post(`/issuance/subscriptions/${id}/retry-collection`, w.staff.token, {}, key());
    expect(retried.status).toBe(200);
    await reaches(w, id, { status: 'approved', payment_status: 'processing' });
    const again = await collections(id);
    expect(again).toHaveLength(2);
    const fresh = again.find((c) => c.id !== collection!.id)!;
    expect((await w.api.post(`/payments/sandbox/operator/collections/${fresh.id}/settle`, w.staff.token)).status).toBe(
      200,
    );
    await reaches(w, id, { status: 'completed', payment_status: 'in_escrow' });
    expect((await w.api.post(`/issuance/subscriptions/${id}/retry-collection`, w.staff.token, {}, key())).status).toBe(
      409,
    );
  });

  it('reconciles a wire subscription by reference code, refusing an amount that does not match', async () => {
    const id = await signedSubscription(w, 4);
    const submitted = await w.api.post(`/issuance/subscriptions/${id}/submit-for-review`, w.investor.token, {
      paymentMethod: 'wire',
    });
    const code = submitted.body.data.reference_code as string;
    expect(code).toMatch(/^TRN-/);
    await w.api.post(`/issuance/subscriptions/${id}/approve`, w.staff.token);
    const wrong = await w.api.post(
      '/issuance/reconciliations',
      w.staff.token,
      {
        referenceCode: code,
        amount: '49.99',
      },
      key(),
    );
    expect([wrong.status, wrong.body.error.code]).toEqual([422, 'AMOUNT_MISMATCH']);
    expect(await subscription(w, id)).toMatchObject({ status: 'approved', payment_status: 'pending' });
    const right = await w.api.post(
      '/issuance/reconciliations',
      w.staff.token,
      {
        referenceCode: code,
        amount: '50.00',
      },
      key(),
    );
    expect(right.status).toBe(200);
    expect(right.body.data).toMatchObject({ status: 'completed', payment_status: 'in_escrow' });
    expect(await collections(id)).toEqual([]); // nothing was charged through the processor
  });

  it('refunds a collection that reached escrow: payment_status refunded', async () => {
    const id = await signedSubscription(w, 2);
    await linkCard(w, id);
    await approved(w, id);
    await reaches(w, id, { payment_status: 'processing' });
    const [collection] = await collections(id);
    await w.api.post(`/payments/sandbox/operator/collections/${collection!.id}/settle`, w.staff.token);
    await reaches(w, id, { status: 'completed', payment_status: 'in_escrow' });
    expect(
      (await w.api.post(`/payments/sandbox/operator/payments/${collection!.id}/refund`, w.staff.token)).status,
    ).toBe(200);
    await reaches(w, id, { status: 'completed', payment_status: 'refunded' });
  });
});

describe('Set A with the sandbox processor, automatic settlement', () => {
  let svc: TestService;
  let w: World;

  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { SANDBOX_AUTO_SETTLE: 'true', SANDBOX_SETTLEMENT_DELAY_MS: '300' } });
    w = await world(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  it('completes with in_escrow on its own shortly after approval', async () => {
    const id = await signedSubscription(w, 3);
    await linkCard(w, id);
    await approved(w, id);
    const done = await reaches(w, id, { status: 'completed', payment_status: 'in_escrow' });
    expect(done.total_amount).toBe('37.50');
  });
});
