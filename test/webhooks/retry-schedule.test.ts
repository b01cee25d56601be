import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { Config } from '../../lib/runtime/config';
import type { Orm } from '../../db/orm';
import { retryDelivery } from '../../webhooks/recovery/manual-retry';
import { timeSkippingEnv } from '../support/time-skipping';
import { ensureSearchAttributes } from '../../lib/runtime/temporal';
import { SEARCH_ATTRIBUTE_NAMES } from '../../domain/search-attributes';
import { Receiver } from './support/receiver';
import { gaps, webhookActivities, webhookHarness, webhookOps } from './support/webhook-harness';
import { ATTEMPT_DELAYS_MS } from '../../domain/retry-schedule';

// Scheduling slack on top of each spec delay (the attempt's own duration, task dispatch), as a
// share of the delay: each step of §6.5 is at least 3x the one before, so half a delay of slack
// still pins every attempt to its own step, however loaded the machine (an attempt now makes three
// database round trips: its target, its start, its result).
const within = (delay: number) => delay + delay / 2;

describe('delivery schedule under time skipping (spec §6.5)', () => {
  let env: TestWorkflowEnvironment;
  let config: Config;
  let orm: Orm;
  let worker: Worker;
  let running: Promise<void>;
  let receiver: Receiver;
  let ops: ReturnType<typeof webhookOps>;
  const taskQueue = `ts-webhooks-${randomUUID()}`;
  const hook = () => `ts-${randomUUID().slice(0, 8)}`;
  let exhaustedHistory:
    { workflowId: string; history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>> } | undefined;
  const retry = (deliveryId: string) =>
    ops.delivery(deliveryId).then((d) => retryDelivery({ temporal: env.client, taskQueue, reads: ops.reads }, d));

  beforeAll(async () => {
    [env, { config, orm }, receiver] = await Promise.all([timeSkippingEnv(), webhookHarness(), Receiver.start()]);
    // The delivery workflow keeps its status in a search attribute (Web UI).
    await ensureSearchAttributes(env.connection, 'default', SEARCH_ATTRIBUTE_NAMES);
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
      activities: webhookActivities(config, orm),
    });
    running = worker.run();
    ops = webhookOps({ config, orm, client: env.client, taskQueue, receiver });
  }, 120_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await orm?.close();
    await env?.teardown();
    await receiver?.stop();
  });

  it('attempts at 0, 30 s, 2 min, 15 min, 1 h, 4 h, 12 h and 24 h after the previous one, then is exhausted', async () => {
    const h = hook();
    const endpoint = await ops.endpoint(h, { defaultStatus: 500 });
    const { deliveryId, handle } = await ops.publish(endpoint.id, { viaDispatcher: false });
    expect(await handle.result()).toBe('exhausted');
    exhaustedHistory = { workflowId: handle.workflowId, history: await handle.fetchHistory() };

    const attempts = await ops.attempts(deliveryId);
    expect(attempts.map((a) => [a.number, a.response_status])).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => [n, 500]));
    gaps(attempts).forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(ATTEMPT_DELAYS_MS[i + 1]!);
      expect(gap).toBeLessThan(within(ATTEMPT_DELAYS_MS[i + 1]!));
    });
    expect(ATTEMPT_DELAYS_MS).toEqual([0, 30_000, 120_000, 900_000, 3_600_000, 14_400_000, 43_200_000, 86_400_000]);
    expect(await ops.delivery(deliveryId)).toMatchObject({
      status: 'exhausted',
      attempt_count: 8,
      next_attempt_at: null,
    });
    const got = await receiver.received(h);
    expect(got).toHaveLength(8);
    expect(
      new Set(got.map((d) => `${d.verified} ${d.headers['x-service-event-id']} ${d.headers['x-service-delivery-id']}`))
        .size,
    ).toBe(1);
    expect(got[0]!.verified).toBe(true);
  });

  it('gives an exhausted delivery one more attempt per manual retry, numbering continued, until one succeeds', async () => {
    const h = hook();
    const endpoint = await ops.endpoint(h, { defaultStatus: 500 });
    const { deliveryId, handle } = await ops.publish(endpoint.id, { viaDispatcher: false });
    expect(await handle.result()).toBe('exhausted');

    await retry(deliveryId);
    expect(await handle.result()).toBe('exhausted');
    expect((await ops.attempts(deliveryId)).map((a) => a.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await ops.delivery(deliveryId)).toMatchObject({ status: 'exhausted', attempt_count: 9 });

    await receiver.plan(h, { secret: (await ops.store.rotate(ops.orgId, endpoint.id)).secret, defaultStatus: 200 });
    await retry(deliveryId);
    expect(await handle.result()).toBe('success');
    const attempts = await ops.attempts(deliveryId);
    expect(attempts.map((a) => [a.number, a.response_status])).toEqual([
      ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => [n, 500]),
      [10, 200],
    ]);
    const got = await receiver.received(h);
    expect(got).toHaveLength(10);
    expect(new Set(got.map((d) => d.headers['x-service-event-id'])).size).toBe(1);
    await expect(retry(deliveryId)).rejects.toMatchObject({ status: 409, code: 'DELIVERY_SUCCEEDED' });
  });

  it('attempts a failed delivery now on manual retry, and the schedule goes on from there', async () => {
    const h = hook();
    const endpoint = await ops.endpoint(h, { responses: [500, 500], defaultStatus: 200 });
    const { deliveryId, handle } = await ops.publish(endpoint.id, { viaDispatcher: false });
    await ops.attemptsReach(deliveryId, 1);
    await retry(deliveryId);
    await ops.attemptsReach(deliveryId, 2);
    expect(await handle.result()).toBe('success');

    const attempts = await ops.attempts(deliveryId);
    expect(attempts.map((a) => [a.number, a.response_status])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    const [manual, next] = gaps(attempts);
    expect(manual).toBeLessThan(ATTEMPT_DELAYS_MS[1]!); // not the 30 s wait
    expect(next).toBeGreaterThanOrEqual(ATTEMPT_DELAYS_MS[2]!); // attempt 3 keeps its 2 min delay
    expect(next).toBeLessThan(within(ATTEMPT_DELAYS_MS[2]!));
  });

  it('signs the next attempt with a secret rotated during the schedule', async () => {
    const h = hook();
    const endpoint = await ops.endpoint(h, { responses: [500] });
    const { handle, deliveryId } = await ops.publish(endpoint.id, { viaDispatcher: false });
    await ops.attemptsReach(deliveryId, 1);
    const { secret } = await ops.store.rotate(ops.orgId, endpoint.id);
    await receiver.plan(h, { secret });
    expect(await handle.result()).toBe('success');
    const [first, second] = await receiver.received(h);
    expect(first!.verified).toBe(true); // against the secret of its time
    expect(second!.verified).toBe(true); // only the new secret verifies it now
    expect(first!.headers['x-service-signature']).not.toBe(second!.headers['x-service-signature']);
  });

  it('ends a delivery whose endpoint was deleted mid-schedule without further attempts', async () => {
    const h = hook();
    const endpoint = await ops.endpoint(h, { defaultStatus: 500 });
    const { handle, deliveryId } = await ops.publish(endpoint.id, { viaDispatcher: false });
    await ops.attemptsReach(deliveryId, 1);
    // No signal here: the next attempt itself finds the endpoint gone (the workers also signal, webhooks/endpoints/deleted-endpoints.ts).
    await ops.store.remove(ops.orgId, endpoint.id);
    expect(await handle.result()).toBe('endpoint_deleted');
    expect(await ops.attempts(deliveryId)).toHaveLength(1);
    expect(await receiver.received(h)).toHaveLength(1);
  });

  it('replays the recorded history of a full schedule with the current workflow code (determinism guard)', async () => {
    expect(exhaustedHistory).toBeDefined();
    await Worker.runReplayHistory(
      // The time-skipping worker above ran with the default converter (its client seals nothing), so its
      // history is replayed the same way: the stack's codec refuses unsealed payloads (record 0379).
      { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! } },
      exhaustedHistory!.history,
      exhaustedHistory!.workflowId,
    );
  });
});
