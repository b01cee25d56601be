import { randomUUID } from 'node:crypto';
import { AccessTokens } from '../../identity/access-tokens';
import { freshDatabase } from '../support/service';
import { http } from '../support/http';
import { until } from '../support/wait';
import { startServicePair, type ServicePair } from './support/service-pair';
import { sql, verdict, wireFlowWorld } from './support/subscription-flow';

/**
 * kill -9 of the only worker in the middle of a refund: the processor has refunded and the activity
 * has not returned (the worker stops at TEST_PAUSE_AT=refund-sent, NODE_ENV=test only). Tranche must
 * hold a record of the refund while it is in doubt, and after a new worker finishes the refund the
 * money must be exactly accounted for: one refund at the processor, one intent succeeded with its id,
 * the subscription's amounts and payment status, and the offering's counters
 * (docs/decisions/0374-refund-intents.md, 0287-counters-follow-money.md).
 */
describe('a worker killed with SIGKILL while a refund is at the processor', () => {
  let pair: ServicePair;
  let databaseUrl: string;
  const temporalAddress = process.env.TEMPORAL_ADDRESS!;

  beforeAll(async () => {
    databaseUrl = await freshDatabase();
    pair = await startServicePair({
      databaseUrl,
      temporalAddress,
      // The sandbox settles a collection only when told, so it can arrive after a void and be held.
      extra: { NODE_ENV: 'test', BEHAVIOUR_SET: 'A', SANDBOX_AUTO_SETTLE: 'false' },
      firstWorkers: { TEST_PAUSE_AT: 'refund-sent' },
    });
  }, 300_000);
  afterAll(() => pair?.stop());

  it('records the refund before the processor moves it, and finishes it exactly once on a new worker', async () => {
    const world = await wireFlowWorld({ baseUrl: pair.baseUrl, pem: pair.pem, databaseUrl });
    const api = http(pair.baseUrl);
    const { staff } = world.tokens;
    const admin = await adminToken(pair, world.org);
    const ok = async (call: Promise<{ status: number; body: any }>) => {
      const res = await call;
      if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body.data;
    };
    const command = (id: string, op: string, token: string, body: unknown = {}) =>
      ok(api.post(`/issuance/subscriptions/${id}/${op}`, token, body, { 'idempotency-key': randomUUID() }));

    // One subscription completed and counted: the counters hold its 500.00 and its investor.
    const counted = await world.toReview();
    await world.approve(counted.id);
    await world.reconcile(counted.reference_code);
    const counters = () =>
      sql(databaseUrl, `select investor_count, raised_amount::numeric(39,2)::text as raised from offerings`);
    expect(await counters()).toEqual([{ investor_count: 1, raised: '500.00' }]);

    // A second, by card: approved, collected, voided while the collection was under way; its 500.00 arrives after and is held.
    const { id } = await world.toReviewByCard();
    await command(id, 'approve', staff);
    const collection = await until(
      `the collection of ${id}`,
      async () =>
        (await api.get(`/payments/sandbox/operator/collections?subscription_id=${id}`, staff)).body.data as {
          id: string;
        }[],
      (rows) => rows.length === 1,
    );
    await command(id, 'void', admin, { reason: 'withdrawn' });
    await ok(api.post(`/payments/sandbox/operator/collections/${collection[0]!.id}/settle`, staff));
    await until(
      `the held payment of ${id}`,
      () => world.get(id),
      (s) => s.amount_received === '500.00',
    );

    // The refund: the worker stops once the processor has answered, and dies there.
    const key = randomUUID();
    // Longer than the API's own wait (COMMAND_TIMEOUT_MS, 60 s): the worker's replacement needs the
    // activity's 30 s timeout to pass before the refund is retried.
    const refund = async () => {
      const res = await fetch(`${pair.baseUrl}/issuance/subscriptions/${id}/refund`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ amount: '20.00', reason: 'part back' }),
        signal: AbortSignal.timeout(150_000),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const first = refund();
    const [paused] = pair.workers;
    await paused!.waitForLog(/test pause point reached/, 120_000);
    const ledger = () =>
      sql(
        databaseUrl,
        'select id, amount_cents::text as amount from payment_sandbox_refunds where subscription_id = $1',
        [id],
      );
    const intents = () =>
      sql(
        databaseUrl,
        `select status, amount_minor::text as amount, currency, processor_key, processor_refund_id, request_key, requested_by, reason
           from refund_intents where subscription_id = $1`,
        [id],
      );
    expect(await ledger()).toEqual([{ id: expect.any(String), amount: '2000' }]);
    // The money has left; Tranche already holds what it asked for, before knowing the outcome.
    expect(await intents()).toEqual([
      {
        status: 'requested',
        amount: '2000',
        currency: 'USD',
        processor_key: expect.stringMatching(/^refund-/),
        processor_refund_id: null,
        request_key: key,
        requested_by: 'admin-1',
        reason: 'part back',
      },
    ]);
    await paused!.kill9();
    await pair.addWorker();

    // The API may give up waiting (503 COMMAND_OUTCOME_UNKNOWN); the same key then gets the real answer.
    let answer = await first;
    if (answer.status !== 200) {
      answer = await until(`the refund of ${id} under its key`, refund, (r) => r.status === 200, {
        timeoutMs: 120_000,
        intervalMs: 1000,
      });
    }
    expect(answer.body.data).toMatchObject({ status: 'voided', amount_received: '500.00', amount_refunded: '20.00' });

    const [done] = await ledger();
    expect(await ledger()).toHaveLength(1);
    expect(await intents()).toEqual([
      expect.objectContaining({ status: 'succeeded', amount: '2000', processor_refund_id: done!.id }),
    ]);
    expect(await world.get(id)).toMatchObject({
      status: 'voided',
      payment_status: 'received',
      amount_received: '500.00',
      amount_refunded: '20.00',
    });
    // The refund intents, as staff read them.
    const read = await ok(api.get(`/issuance/subscriptions/${id}/refunds`, admin));
    expect(read.items).toEqual([
      expect.objectContaining({ status: 'succeeded', amount: '20.00', currency: 'USD', processor_refund_id: done!.id }),
    ]);
    // A held payment was never counted, so nothing of it comes off the counters.
    expect(await counters()).toEqual([{ investor_count: 1, raised: '500.00' }]);
    const after = await verdict({ databaseUrl, temporalAddress }, id);
    expect(after.projectionEqualsWorkflow).toBe(true);
    expect(after.eventCounts['payment.refunded']).toBe(1);
  }, 300_000);
});

async function adminToken(pair: ServicePair, org: string): Promise<string> {
  const tokens = await AccessTokens.create({ privateKeyPem: pair.pem, ttlSeconds: 3600 });
  return tokens.sign({ userId: 'admin-1', orgId: org, roles: ['admin'], kycCompleted: false });
}
