import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { Config } from '../../lib/runtime/config';
import type { Orm } from '../../db/orm';
import { ENDPOINT_DISABLED } from '../../domain/events';
import { timeSkippingEnv } from '../support/time-skipping';
import { ensureSearchAttributes } from '../../lib/runtime/temporal';
import { SEARCH_ATTRIBUTE_NAMES } from '../../domain/search-attributes';
import { Receiver } from './support/receiver';
import { gaps, webhookActivities, webhookHarness, webhookOps } from './support/webhook-harness';
import { ATTEMPT_DELAYS_MS } from '../../domain/retry-schedule';

// Slack on top of each expected wait (the attempt's own duration, task dispatch), as in retry-schedule.test.ts.
const within = (delay: number) => delay + delay / 2;
const CAP_S = 3600;
const FAILING_PERIOD_S = 12 * 3600;

/**
 * Endpoint health on the delivery schedule, under time skipping: Retry-After stretches a wait (capped,
 * never an extra attempt), a 410 or failing for the configured period disables the endpoint and
 * ends the delivery.
 */
describe('endpoint health on the delivery schedule (time skipping)', () => {
  let env: TestWorkflowEnvironment;
  let config: Config;
  let orm: Orm;
  let worker: Worker;
  let strictWorker: Worker;
  let running: Promise<unknown>;
  let receiver: Receiver;
  let ops: ReturnType<typeof webhookOps>;
  /** Deliveries on a worker whose endpoints are disabled after 12 h of failures, not 5 days. */
  let strict: ReturnType<typeof webhookOps>;
  const taskQueue = `ts-health-${randomUUID()}`;
  const strictQueue = `ts-health-strict-${randomUUID()}`;
  const hook = () => `th-${randomUUID().slice(0, 8)}`;
  let stretched: { workflowId: string; history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>> } | undefined;
  const endpointRow = (id: string) =>
    ops.knex()('webhook_endpoints').where({ id }).first('status', 'disabled_reason', 'failing_since');

  beforeAll(async () => {
    [env, { config, orm }, receiver] = await Promise.all([
      timeSkippingEnv(),
      webhookHarness({ WEBHOOK_RETRY_AFTER_CAP_SECONDS: String(CAP_S) }),
      Receiver.start(),
    ]);
    await ensureSearchAttributes(env.connection, 'default', SEARCH_ATTRIBUTE_NAMES);
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
      activities: webhookActivities(config, orm),
    });
    strictWorker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: strictQueue,
      workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
      activities: webhookActivities({ ...config, WEBHOOK_DISABLE_AFTER_FAILING_SECONDS: FAILING_PERIOD_S }, orm),
    });
    running = Promise.all([worker.run(), strictWorker.run()]);
    ops = webhookOps({ config, orm, client: env.client, taskQueue, receiver });
    strict = webhookOps({ config, orm, client: env.client, taskQueue: strictQueue, receiver });
  }, 120_000);

  afterAll(async () => {
    worker?.shutdown();
    strictWorker?.shutdown();
    await running;
    await orm?.close();
    await env?.teardown();
    await receiver?.stop();
  });

  it('waits as long as a 503’s Retry-After asks when that is longer than the schedule, and next_attempt_at shows it', async () => {
    const h = hook();
    const endpoint = await ops.endpoint(h, {
      responses: [{ status: 503, headers: { 'retry-after': '600' } }],
      defaultStatus: 200,
    });
    const { deliveryId, handle } = await ops.publish(endpoint.id, { viaDispatcher: false });
    const [first] = await ops.attemptsReach(deliveryId, 1);
    const waiting = await ops.delivery(deliveryId);
    const shown = new Date(waiting!.next_attempt_at!).getTime() - new Date(first!.attempted_at).getTime();
    expect(shown).toBeGreaterThanOrEqual(600_000);
    expect(shown).toBeLessThan(600_000 + 30_000); // plus the attempt's own duration, at most its timeout

    expect(await handle.result()).toBe('success');
    stretched = { workflowId: handle.workflowId, history: await handle.fetchHistory() };
    const [gap] = gaps(await ops.attempts(deliveryId));
    expect(gap).toBeGreaterThanOrEqual(600_000);
    expect(gap).toBeLessThan(within(600_000));
  });

  it('honours an HTTP-date Retry-After on a 429', async () => {
    const h = hook();
    const at = new Date(Date.now() + 20 * 60_000).toUTCString();
    const endpoint = await ops.endpoint(h, {
      responses: [{ status: 429, headers: { 'retry-after': at } }],
      defaultStatus: 200,
    });
    const { deliveryId, handle } = await ops.publish(endpoint.id, { viaDispatcher: false });
    expect(await handle.result()).toBe('success');
    const [gap] = gaps(await ops.attempts(deliveryId));
    // The date is read against the clock of the attempt, a little after it was written.
    expect(gap).toBeGreaterThanOrEqual(18 * 60_000);
    expect(gap).toBeLessThan(within(20 * 60_000));
  });

  it('keeps the schedule when Retry-After asks for less, or comes with a status other than 429/503', async () => {
    const h = hook();
    const endpoint = await ops.endpoint(h, {
      responses: [
        { status: 503, headers: { 'retry-after': '5' } },
        { status: 500, headers: { 'retry-after': '600' } },
      ],
      defaultStatus: 200,
    });
    const { deliveryId, handle } = await ops.publish(endpoint.id, { viaDispatcher: false });
    expect(await handle.result()).toBe('success');
    const [a, b] = gaps(await ops.attempts(deliveryId));
    expect(a).toBeGreaterThanOrEqual(ATTEMPT_DELAYS_MS[1]!);
    expect(a).toBeLessThan(within(ATTEMPT_DELAYS_MS[1]!));
    expect(b).toBeGreaterThanOrEqual(ATTEMPT_DELAYS_MS[2]!);
    expect(b).toBeLessThan(within(ATTEMPT_DELAYS_MS[2]!));
  });

  it('caps a long Retry-After at WEBHOOK_RETRY_AFTER_CAP_SECONDS and still makes exactly 8 attempts', async () => {
    const h = hook();
    const endpoint = await ops.endpoint(h, {
      defaultStatus: { status: 429, headers: { 'retry-after': String(30 * 86_400) } },
    });
    const { deliveryId, handle } = await ops.publish(endpoint.id, { viaDispatcher: false });
    expect(await handle.result()).toBe('exhausted');
    const attempts = await ops.attempts(deliveryId);
    expect(attempts.map((a) => [a.number, a.response_status])).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => [n, 429]));
    gaps(attempts).forEach((gap, i) => {
      const expected = Math.max(ATTEMPT_DELAYS_MS[i + 1]!, CAP_S * 1000);
      expect(gap).toBeGreaterThanOrEqual(expected);
      expect(gap).toBeLessThan(within(expected));
    });
    expect(await ops.delivery(deliveryId)).toMatchObject({
      status: 'exhausted',
      attempt_count: 8,
      next_attempt_at: null,
    });
    expect(await endpointRow(endpoint.id)).toMatchObject({ status: 'enabled' }); // 44 h of failures, under the 5 days
  });

  it('disables the endpoint on a 410 at a later attempt and ends the delivery there', async () => {
    const h = hook();
    const endpoint = await ops.endpoint(h, { responses: [500, 410], defaultStatus: 200 });
    const { deliveryId, handle } = await ops.publish(endpoint.id, { viaDispatcher: false });
    expect(await handle.result()).toBe('endpoint_disabled');
    expect((await ops.attempts(deliveryId)).map((a) => a.response_status)).toEqual([500, 410]);
    expect(await receiver.received(h)).toHaveLength(2);
    expect(await endpointRow(endpoint.id)).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
    expect(await ops.delivery(deliveryId)).toMatchObject({ status: 'failed', next_attempt_at: null });
    const [event] = await ops.knex()('events').where({ org_id: ops.orgId, type: ENDPOINT_DISABLED }).select('data');
    expect(event.data).toMatchObject({ endpoint_id: endpoint.id, reason: 'gone' });
  });

  it('disables an endpoint that failed every attempt for the configured period, at the first attempt past it', async () => {
    const h = hook();
    const endpoint = await strict.endpoint(h, { defaultStatus: 500 });
    const { deliveryId, handle } = await strict.publish(endpoint.id, { viaDispatcher: false });
    expect(await handle.result()).toBe('endpoint_disabled');
    const attempts = await strict.attempts(deliveryId);
    // Attempt 7 comes 17 h 17 min after attempt 1 (§6.5), the first past the 12 h period; no attempt 8.
    expect(attempts).toHaveLength(7);
    const failingFor = new Date(attempts[6]!.attempted_at).getTime() - new Date(attempts[0]!.attempted_at).getTime();
    expect(failingFor).toBeGreaterThanOrEqual(FAILING_PERIOD_S * 1000);
    expect(new Date(attempts[5]!.attempted_at).getTime() - new Date(attempts[0]!.attempted_at).getTime()).toBeLessThan(
      FAILING_PERIOD_S * 1000,
    );
    expect(await receiver.received(h)).toHaveLength(7);
    expect(
      await strict.knex()('webhook_endpoints').where({ id: endpoint.id }).first('status', 'disabled_reason'),
    ).toMatchObject({ status: 'disabled', disabled_reason: 'failing' });
    expect(await strict.delivery(deliveryId)).toMatchObject({ status: 'failed', next_attempt_at: null });
    const [event] = await strict
      .knex()('events')
      .where({ org_id: strict.orgId, type: ENDPOINT_DISABLED })
      .select('data');
    expect(event.data).toMatchObject({ endpoint_id: endpoint.id, reason: 'failing' });
  });

  it('replays the recorded history of a stretched schedule with the current workflow code (determinism guard)', async () => {
    expect(stretched).toBeDefined();
    await Worker.runReplayHistory(
      // The time-skipping worker above ran with the default converter (its client seals nothing), so its
      // history is replayed the same way: the stack's codec refuses unsealed payloads (record 0379).
      { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! } },
      stretched!.history,
      stretched!.workflowId,
    );
  });
});
