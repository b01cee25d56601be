import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { Config } from '../../lib/runtime/config';
import type { Orm } from '../../db/orm';
import { createDeliveryEngine, type RunningEngine } from '../../webhooks';
import { DELIVERY_WORKFLOW, deliveryWorkflowId } from '../../domain/webhook-messages';
import { subscriptionWorkflowId } from '../../domain/subscription';
import { ATTEMPT_DELAYS_MS } from '../../domain/retry-schedule';
import { registry } from '../../lib/runtime/metrics';
import { ensureSearchAttributes } from '../../lib/runtime/temporal';
import { SEARCH_ATTRIBUTE_NAMES } from '../../domain/search-attributes';
import type { TestService } from '../support/service';
import { lifecycleWorld } from '../support/subscriptions';
import { openedHistoryJSON, testDataConverter } from '../support/data-converter';
import { timeSkippingEnv } from '../support/time-skipping';
import type { Actor } from '../support/fixtures';
import { http } from '../support/http';
import { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';
import { until } from '../support/wait';
import { PATHS, registerHook } from './support/hooks';
import { anEvent, publish, publishUnqueued } from './support/publish';
import { gaps, webhookActivities, webhookHarness, webhookOps } from './support/webhook-harness';

/**
 * `WEBHOOK_DELIVERY_SHAPE=workflow` (docs/decisions/0297-webhook-delivery-shape-as-a-setting.md):
 * every delivery is a workflow from attempt 1, whatever shape the rest of the run uses.
 */
const WORKFLOW_SHAPE = { WEBHOOK_DELIVERY_SHAPE: 'workflow', WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' };

/** The delivery workflows Temporal's visibility lists for one endpoint (eventually consistent: waited for). */
async function listedFor(temporal: Client, endpointId: string, count: number) {
  return until(`${count} delivery workflows listed for ${endpointId}`, async () => {
    const found = [];
    for await (const w of temporal.workflow.list({ query: `WebhookEndpointId = '${endpointId}'` })) found.push(w);
    return found.length >= count ? found : undefined;
  });
}

describe('workflow shape on the real stack: every delivery is a workflow from attempt 1', () => {
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;
  const hook = () => `ws-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    ({ svc, receiver, staff } = await startWebhookStack('A', WORKFLOW_SHAPE));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  it('makes a test ping that succeeds at once a top-level workflow, listed by its search attributes', async () => {
    const h = hook();
    const endpoint = await registerHook(svc, receiver, staff, h, ['*']);
    const res = await http(svc.baseUrl).post(`${PATHS.A.endpoints}/${endpoint.id}/test`, staff.token);
    expect(res.status).toBe(202);
    const { delivery_id } = res.body.data;
    const [got] = await receiver.waitFor(h, 1);
    expect(got!.verified).toBe(true);
    expect(got!.headers['x-service-delivery-id']).toBe(delivery_id);

    const handle = svc.temporal.workflow.getHandle(deliveryWorkflowId(delivery_id));
    expect(await handle.result()).toBe('success');
    const [listed] = await listedFor(svc.temporal, endpoint.id, 1);
    expect(listed!.workflowId).toBe(deliveryWorkflowId(delivery_id));
    expect(listed!.type).toBe('webhookDeliveryWorkflow');
    const described = await handle.describe();
    expect(described.status.name).toBe('COMPLETED');
    expect(described.parentExecution).toBeUndefined();
    expect(described.searchAttributes).toMatchObject({
      WebhookEndpointId: [endpoint.id],
      WebhookEventType: ['test.ping'],
      WebhookDeliveryStatus: ['success'],
    });
    // Its organisation is its task queue fairness key, which its attempts inherit (decision 0325).
    expect(described.priority).toMatchObject({ fairnessKey: staff.orgId });
    // One attempt, sent once: the dispatcher made none of its own.
    const attempts = await svc.orm.em
      .getConnection()
      .execute(`select number, owner, response_status from webhook_attempts where delivery_id = ?`, [delivery_id]);
    expect(attempts).toEqual([{ number: 1, owner: expect.stringMatching(/^run:/), response_status: 200 }]);
    expect(await receiver.received(h)).toHaveLength(1);

    // One workflow task: attempt 1 is a local activity, and the status is shown with no patch
    // marker, so a delivery costs the server one write after its start (decision 0334).
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const markers = events.flatMap((e) => e.markerRecordedEventAttributes?.markerName ?? []);
    expect(markers).toEqual(['core_local_activity']);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes)).toHaveLength(0);
    expect(events.filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(1);
    const upserted = events.flatMap((e) =>
      Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}),
    );
    expect(upserted).toEqual(['WebhookDeliveryStatus']);
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! }, dataConverter: testDataConverter() },
      history,
    );
  });

  it("starts a delivery's workflow eagerly: its first task comes back to this worker in the start's answer", async () => {
    const eagerStarts = async () =>
      ((await registry.getSingleMetric('tranche_webhook_delivery_workflow_starts_total')!.get()).values.find(
        (v) => v.labels.eager === 'true',
      )?.value ?? 0) as number;
    const before = await eagerStarts();
    const h = hook();
    const endpoint = await registerHook(svc, receiver, staff, h, ['*']);
    const res = await http(svc.baseUrl).post(`${PATHS.A.endpoints}/${endpoint.id}/test`, staff.token);
    expect(res.status).toBe(202);
    await receiver.waitFor(h, 1);
    const handle = svc.temporal.workflow.getHandle(deliveryWorkflowId(res.body.data.delivery_id));
    expect(await handle.result()).toBe('success');
    // The engine's client shares the worker's connection (worker/main.ts, decision 0331).
    expect(await eagerStarts()).toBeGreaterThan(before);
  });

  it("makes a subscription event's delivery a child of the subscription workflow", async () => {
    const world = await lifecycleWorld(svc);
    const h = hook();
    const endpoint = await registerHook(svc, receiver, world.staff, h, ['subscription.created']);
    const sub = await world.create();
    const [got] = await receiver.waitFor(h, 1);
    const deliveryId = got!.headers['x-service-delivery-id']!;
    const handle = svc.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId));
    expect(await handle.result()).toBe('success');
    const described = await handle.describe();
    expect(described.parentExecution?.workflowId).toBe(subscriptionWorkflowId(sub.id as string));
    expect(described.priority).toMatchObject({ fairnessKey: world.staff.orgId });
    // A command after the child's start, then the parent's history, its child's start with the key
    // included, replays on today's code.
    expect((await world.post(sub.id as string, 'request-signature', world.investor)).status).toBe(200);
    const parent = await svc.temporal.workflow.getHandle(subscriptionWorkflowId(sub.id as string)).fetchHistory();
    expect(parent.events?.some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toBe(true);
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! }, dataConverter: testDataConverter() },
      parent,
    );
    // RECORD_HISTORY_DIR=test/replay/histories records this shape, payloads opened, for the replay suite.
    if (process.env.RECORD_HISTORY_DIR)
      writeFileSync(
        join(process.env.RECORD_HISTORY_DIR, 'workflow-shape-children.json'),
        await openedHistoryJSON(parent),
      );
    const [listed] = await listedFor(svc.temporal, endpoint.id, 1);
    expect(listed!.workflowId).toBe(deliveryWorkflowId(deliveryId));
    // Taken off the queue in the publishing transaction: no engine started it as well.
    expect(
      await svc.orm.em.getConnection().execute(`select 1 from webhook_queue where delivery_id = ?`, [deliveryId]),
    ).toEqual([]);
    expect(await receiver.received(h)).toHaveLength(1);
  });

  it("holds an endpoint's max_in_flight: a burst to an endpoint limited to 1 never overlaps", async () => {
    const h = hook();
    const endpoint = await registerHook(svc, receiver, staff, h, ['*'], { delayMs: 300 });
    const api = http(svc.baseUrl);
    const patched = await api.patch(`${PATHS.A.endpoints}/${endpoint.id}`, staff.token, { maxInFlight: 1 });
    expect(patched.status).toBe(200);
    const pings = await Promise.all(
      [1, 2, 3, 4].map(() => api.post(`${PATHS.A.endpoints}/${endpoint.id}/test`, staff.token)),
    );
    expect(pings.map((p) => p.status)).toEqual([202, 202, 202, 202]);
    await receiver.waitFor(h, 4);
    const attempts = await until('four attempts recorded', async () => {
      const rows: { attempted_at: Date; duration_ms: number }[] = await svc.orm.em.getConnection().execute(
        `select a.attempted_at, a.duration_ms from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
              where d.endpoint_id = ? and a.duration_ms is not null order by a.attempted_at`,
        [endpoint.id],
      );
      return rows.length === 4 ? rows : undefined;
    });
    // Each POST starts only after the one before it ended.
    for (let i = 1; i < attempts.length; i++) {
      const previousEnd = new Date(attempts[i - 1]!.attempted_at).getTime() + attempts[i - 1]!.duration_ms;
      expect(new Date(attempts[i]!.attempted_at).getTime()).toBeGreaterThanOrEqual(previousEnd - 5);
    }
    expect(await receiver.received(h)).toHaveLength(4);
  });

  it("starts a queued delivery's workflow only when its endpoint has room", async () => {
    const h = hook();
    const endpoint = await registerHook(svc, receiver, staff, h, ['*'], { delayMs: 1500 });
    const api = http(svc.baseUrl);
    expect((await api.patch(`${PATHS.A.endpoints}/${endpoint.id}`, staff.token, { maxInFlight: 1 })).status).toBe(200);
    const ping = async () => (await api.post(`${PATHS.A.endpoints}/${endpoint.id}/test`, staff.token)).body.data;
    const first = await ping();
    await receiver.waitFor(h, 1); // the endpoint's one slot is taken for 1.5 s
    const queued: { delivery_id: string }[] = [await ping(), await ping(), await ping()];
    await receiver.waitFor(h, 4, 60_000);
    // Each waited in the queue, not as a workflow: none started before the POST ahead of it ended
    // (docs/decisions/0340-workflow-starts-within-the-endpoints-room.md). Seen failing before: all
    // three started within milliseconds of their ping, while the first POST was still open.
    const knex = svc.orm.em.getConnection().getKnex();
    let ahead = first.delivery_id as string;
    for (const { delivery_id } of queued) {
      const [a] = await knex('webhook_attempts').where({ delivery_id: ahead, number: 1 });
      const endedAt = new Date(a.attempted_at).getTime() + Number(a.duration_ms);
      const { startTime } = await svc.temporal.workflow.getHandle(deliveryWorkflowId(delivery_id)).describe();
      expect({ delivery_id, startedAfterTheOneAhead: startTime.getTime() >= endedAt - 5 }).toEqual({
        delivery_id,
        startedAfterTheOneAhead: true,
      });
      ahead = delivery_id;
    }
  });

  it('wakes a delivery held for a full endpoint when an attempt frees the slot, not only at its timer', async () => {
    const h = hook();
    const endpoint = await registerHook(svc, receiver, staff, h, ['*'], { delayMs: 1500 });
    const api = http(svc.baseUrl);
    expect((await api.patch(`${PATHS.A.endpoints}/${endpoint.id}`, staff.token, { maxInFlight: 1 })).status).toBe(200);
    await api.post(`${PATHS.A.endpoints}/${endpoint.id}/test`, staff.token);
    await receiver.waitFor(h, 1); // the endpoint's one slot is taken for 1.5 s
    // Three deliveries whose workflows start together whatever the endpoint's room, as a subscription
    // workflow starts its events' children: two of them find the slot taken and are held.
    const events = [anEvent(staff.orgId), anEvent(staff.orgId), anEvent(staff.orgId)];
    const { deliveries } = await publishUnqueued(
      svc,
      events,
      events.map((e) => ({ eventId: e.id, endpointId: endpoint.id })),
    );
    const handles = await Promise.all(
      deliveries.map(({ deliveryId }) =>
        svc.temporal.workflow.start(DELIVERY_WORKFLOW, {
          taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
          workflowId: deliveryWorkflowId(deliveryId),
          args: [{ deliveryId, statusShown: true }],
        }),
      ),
    );
    await receiver.waitFor(h, 4, 60_000);
    // Seen failing before docs/decisions/0337-held-attempts-woken.md: no held delivery was ever signalled.
    const signalled = await Promise.all(
      handles.map(async (handle) => {
        expect(await handle.result()).toBe('success');
        const { events: history } = await handle.fetchHistory();
        return (history ?? []).some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'slotFree');
      }),
    );
    expect(signalled.filter(Boolean).length).toBeGreaterThan(0);
  });
});

describe('workflow shape under time skipping: a failing delivery follows the §6.5 schedule from attempt 1', () => {
  let env: TestWorkflowEnvironment;
  let config: Config;
  let orm: Orm;
  let worker: Worker;
  let running: Promise<void>;
  let engine: RunningEngine;
  let receiver: Receiver;
  let ops: ReturnType<typeof webhookOps>;
  const taskQueue = `ts-shape-${randomUUID()}`;

  beforeAll(async () => {
    [env, { config, orm }, receiver] = await Promise.all([
      timeSkippingEnv(),
      webhookHarness(WORKFLOW_SHAPE),
      Receiver.start(),
    ]);
    await ensureSearchAttributes(env.connection, 'default', SEARCH_ATTRIBUTE_NAMES);
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
      activities: webhookActivities(config, orm),
    });
    running = worker.run();
    // The engine's own start path (no dispatcher POSTs in this shape): it starts the queued delivery's workflow.
    engine = await createDeliveryEngine({ orm, config }).start({ temporal: env.client, taskQueue });
    ops = webhookOps({ config, orm, client: env.client, taskQueue, receiver });
  }, 120_000);

  afterAll(async () => {
    await engine?.stop();
    worker?.shutdown();
    await running;
    await orm?.close();
    await env?.teardown();
    await receiver?.stop();
  });

  it('attempts at 0, 30 s, 2 min, 15 min, 1 h, 4 h, 12 h and 24 h on durable timers, then is exhausted', async () => {
    const h = `ts-${randomUUID().slice(0, 8)}`;
    const endpoint = await ops.endpoint(h, { defaultStatus: 500 });
    const event = {
      id: randomUUID(),
      type: 'subscription.approved',
      source: 'service.issuance',
      orgId: ops.orgId,
      occurredAt: new Date().toISOString(),
      data: { id: randomUUID() },
    };
    const { deliveries } = await publish({ orm, config }, [event], [{ eventId: event.id, endpointId: endpoint.id }]);
    const deliveryId = deliveries[0]!.deliveryId;
    const handle = env.client.workflow.getHandle(deliveryWorkflowId(deliveryId));
    // Started by the engine from the queue, not by the test.
    await until('the delivery workflow started', () =>
      handle.describe().then(
        (d) => d,
        () => undefined,
      ),
    );
    expect(await handle.result()).toBe('exhausted');
    const described = await handle.describe();
    expect(described.status.name).toBe('COMPLETED');
    // Its own from attempt 1: top-level (no retry scheduler above it), every attempt the workflow's.
    expect(described.parentExecution).toBeUndefined();
    const owners: { owner: string }[] = await orm.em
      .getConnection()
      .execute(`select owner from webhook_attempts where delivery_id = ? order by number`, [deliveryId]);
    expect(owners.map((o) => o.owner)).toEqual(Array(8).fill(`run:${described.runId}`));

    const attempts = await ops.attempts(deliveryId);
    expect(attempts.map((a) => [a.number, a.response_status])).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => [n, 500]));
    gaps(attempts).forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(ATTEMPT_DELAYS_MS[i + 1]!);
      expect(gap).toBeLessThan(ATTEMPT_DELAYS_MS[i + 1]! * 1.5);
    });
    const timers = ((await handle.fetchHistory()).events ?? []).filter((e) => e.timerStartedEventAttributes);
    expect(timers).toHaveLength(7);
    expect(await ops.delivery(deliveryId)).toMatchObject({ status: 'exhausted', attempt_count: 8 });
    expect(await receiver.received(h)).toHaveLength(8);
    expect(
      await orm.em.getConnection().execute(`select 1 from webhook_queue where delivery_id = ?`, [deliveryId]),
    ).toEqual([]);
  });
});
