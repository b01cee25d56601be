import { randomUUID } from 'node:crypto';
import { actor } from '../support/fixtures';
import { Client as PgClient } from 'pg';
import { ownerUrlOf, startService, type TestService } from '../support/service';
import {
  reaches,
  openCheckout,
  postSandboxEvent,
  signedSubscription,
  subscription,
  world,
  type World,
} from './payment-helpers';
import { until } from '../support/wait';

/** Money: no payment taken twice, none after cancel or void, none recorded silently. */
const SUCCESS = 'https://investor.example/ok';
const CANCEL = 'https://investor.example/no';

const eventTypes = async (svc: TestService, id: string): Promise<string[]> =>
  (
    (await svc.orm.em
      .getConnection()
      .execute(`select type from events where data->>'id' = ? or data->>'subscription_id' = ? order by seq`, [
        id,
        id,
      ])) as { type: string }[]
  ).map((r) => r.type);

describe('Set B: payment after cancel or void', () => {
  let svc: TestService;
  let w: World;

  beforeAll(async () => {
    svc = await startService({ set: 'B' });
    w = await world(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  const checkout = (id: string) => openCheckout(w, id);

  it('closes the open checkout session on cancel, so its page can no longer take the payment', async () => {
    const id = await signedSubscription(w, 2);
    const session = await checkout(id);
    expect((await w.api.delete(`/issuance/subscriptions/${id}`, w.investor.token)).status).toBe(204);
    // The workflow closes sessions after the cancel answered: wait for the session to be closed, observed.
    const sessionStatus = async () =>
      (
        (
          await svc.orm.em
            .getConnection()
            .execute(`select status from payment_sandbox_sessions where subscription_id = ?`, [id])
        )[0] as { status: string }
      ).status;
    const status = await until(`the session of ${id} no longer open`, sessionStatus, (s) => s !== 'open', {
      timeoutMs: 20_000,
    });
    expect(status).toBe('closed');
    const pay = await fetch(`${session.session_url}/complete`, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(pay.status).toBe(409);
    expect(await subscription(w, id)).toMatchObject({ status: 'cancelled', payment_status: 'pending' });
  });

  it('holds a payment that still arrives for a cancelled subscription, with a payment.held event, never silently received', async () => {
    const id = await signedSubscription(w, 2);
    await checkout(id);
    await w.api.delete(`/issuance/subscriptions/${id}`, w.investor.token);
    await postSandboxEvent(svc, `evt_late_${id}`, 'payment.succeeded', {
      subscription_id: id,
      reference: id,
      amount: '25.00',
      currency: 'USD',
    });
    await reaches(w, id, { status: 'cancelled', payment_status: 'received' });
    expect(await eventTypes(svc, id)).toContain('payment.held');
  });
});

describe('Set A: card linked, then wire; collection outage', () => {
  let svc: TestService;
  let w: World;
  let admin: Awaited<ReturnType<typeof actor>>;

  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { SANDBOX_AUTO_SETTLE: 'false' } });
    w = await world(svc);
    admin = await actor(svc, w.staff.orgId, ['admin']);
  }, 120_000);
  afterAll(() => svc?.stop());

  const collections = async (id: string) =>
    (await w.api.get(`/payments/sandbox/operator/collections?subscription_id=${id}`, w.staff.token)).body
      .data as unknown[];
  async function linkCard(id: string) {
    const session = (
      await w.api.post(`/issuance/subscriptions/${id}/create-setup-session`, w.investor.token, {
        paymentMethod: 'card',
        successUrl: SUCCESS,
        cancelUrl: CANCEL,
      })
    ).body.data;
    await fetch(`${session.session_url}/complete`, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect((await w.api.post(`/issuance/subscriptions/${id}/finalize-setup`, w.investor.token)).status).toBe(200);
  }

  it('a wire submission releases the linked card: approval charges nothing, the wire completes it', async () => {
    const id = await signedSubscription(w, 4);
    await linkCard(id);
    const submitted = await w.api.post(`/issuance/subscriptions/${id}/submit-for-review`, w.investor.token, {
      paymentMethod: 'wire',
    });
    expect(submitted.body.data.reference_code).toMatch(/^TRN-/);
    expect((await w.api.post(`/issuance/subscriptions/${id}/approve`, w.staff.token)).body.data.status).toBe(
      'approved',
    );
    const done = await w.api.post(
      '/issuance/reconciliations',
      w.staff.token,
      { referenceCode: submitted.body.data.reference_code, amount: '50.00' },
      { 'idempotency-key': randomUUID() },
    );
    expect(done.body.data).toMatchObject({ status: 'completed', payment_status: 'in_escrow' });
    expect(await collections(id)).toEqual([]); // the card was never charged
  });

  it('answers other commands while the processor is down during collection, and voiding stops the collection', async () => {
    const id = await signedSubscription(w, 2);
    await linkCard(id);
    await w.api.post(`/issuance/subscriptions/${id}/submit-for-review`, w.investor.token, {});
    // The outage is staged by the table's owner: the service's own role may not rename it (docs/decisions/0265).
    const owner = new PgClient({
      connectionString: ownerUrlOf(svc.config.DATABASE_URL),
      connectionTimeoutMillis: 5000,
    });
    await owner.connect();
    const knex = { execute: (sql: string) => owner.query(sql) };
    await knex.execute('alter table payment_sandbox_collections rename to payment_sandbox_collections_down');
    try {
      expect((await w.api.post(`/issuance/subscriptions/${id}/approve`, w.staff.token)).status).toBe(200);
      // The outage, observed: the collection activity has failed and is being retried.
      const handle = svc.temporal.workflow.getHandle(`subscription-${id}`);
      const pendingActivities = async () => (await handle.describe()).raw.pendingActivities ?? [];
      await until('the collection activity retried', pendingActivities, (p) => p.some((a) => (a.attempt ?? 0) >= 2), {
        timeoutMs: 60_000,
        intervalMs: 200,
      });
      const voided = await w.api.post(`/issuance/subscriptions/${id}/void`, admin.token, {
        reason: 'investor withdrew',
      });
      expect([voided.status, voided.body.data?.status]).toEqual([200, 'voided']);
      const info = await w.api.post(`/issuance/subscriptions/${id}/request-info`, w.staff.token, { reason: 'x' });
      expect(info.status).toBe(409);
      // The collection is given up with the void: nothing is left pending on the processor.
      const left = await until('no activity pending', pendingActivities, (p) => p.length === 0, {
        timeoutMs: 20_000,
        intervalMs: 200,
      });
      expect(left).toHaveLength(0);
    } finally {
      await knex.execute('alter table payment_sandbox_collections_down rename to payment_sandbox_collections');
      await owner.end();
    }
    expect(await collections(id)).toEqual([]);
    expect(await subscription(w, id)).toMatchObject({ status: 'voided', payment_status: 'pending' });
  }, 180_000);
});
