import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { Config } from '../../lib/runtime/config';
import type { Orm } from '../../db/orm';
import { DELIVERY_EXHAUSTED, ENDPOINT_FAILING, ENDPOINT_RECOVERED, EVENT_SOURCES } from '../../domain/events';
import { AUTOMATIC_ATTEMPTS } from '../../domain/retry-schedule';
import { uuidFromName } from '../../lib/ids';
import { timeSkippingEnv } from '../support/time-skipping';
import { ensureSearchAttributes } from '../../lib/runtime/temporal';
import { SEARCH_ATTRIBUTE_NAMES } from '../../domain/search-attributes';
import { Receiver } from './support/receiver';
import { webhookActivities, webhookHarness, webhookOps } from './support/webhook-harness';
import { publishUnqueued } from './support/publish';
import { deliveryIdFor } from './support/delivery-id';
import { deliveryWorkflowId } from '../../domain/webhook-messages';
import type { webhookDeliveryWorkflow } from '../../workflows/webhook-delivery';

/**
 * `webhook.delivery.exhausted` (docs/decisions/0415-operational-events.md): a delivery that fails its
 * 8th attempt (spec §6.5, 44 h of schedule, under time skipping) is announced once, in the transaction
 * that records it exhausted, to the organisation's endpoints that name the type: not through `*`, not
 * to the endpoint it failed at. The delivery workflow's activity records it, as in both shapes.
 */
describe('webhook.delivery.exhausted (time skipping)', () => {
  let env: TestWorkflowEnvironment;
  let config: Config;
  let orm: Orm;
  let worker: Worker;
  let running: Promise<unknown>;
  let receiver: Receiver;
  let ops: ReturnType<typeof webhookOps>;
  const taskQueue = `ts-exhausted-${randomUUID()}`;

  beforeAll(async () => {
    [env, { config, orm }, receiver] = await Promise.all([timeSkippingEnv(), webhookHarness(), Receiver.start()]);
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

  const endpointNaming = async (eventTypes: string[], plan: { defaultStatus: number }) => {
    const h = `tx-${randomUUID().slice(0, 8)}`;
    const { row, secret } = await ops.store.create(ops.orgId, { url: receiver.url(h), description: h, eventTypes });
    await receiver.plan(h, { ...plan, secret });
    return row;
  };

  it('announces the exhausted delivery once, only to the other endpoints that name the type', async () => {
    const named = await endpointNaming([DELIVERY_EXHAUSTED], { defaultStatus: 200 });
    const star = await ops.endpoint(`tx-star-${randomUUID().slice(0, 8)}`, { defaultStatus: 200 });
    const down = await endpointNaming([DELIVERY_EXHAUSTED, 'subscription.approved'], { defaultStatus: 503 });

    const { deliveryId, eventId, handle } = await ops.publish(down.id, { viaDispatcher: false });
    expect(await handle.result()).toBe('exhausted');
    expect(await ops.delivery(deliveryId)).toMatchObject({ status: 'exhausted', attempt_count: AUTOMATIC_ATTEMPTS });

    const events = await ops.knex()('events').where({ org_id: ops.orgId, type: DELIVERY_EXHAUSTED }).select('*');
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event.id).toBe(uuidFromName(DELIVERY_EXHAUSTED, deliveryId));
    expect(event.data).toEqual({
      delivery_id: deliveryId,
      endpoint_id: down.id,
      event_id: eventId,
      event_type: 'subscription.approved',
      attempts: AUTOMATIC_ATTEMPTS,
      last_attempt_at: expect.any(String),
      last_response_status: 503,
    });
    expect(await ops.knex()('webhook_deliveries').where({ event_id: event.id }).pluck('endpoint_id')).toEqual([
      named.id,
    ]);
    // The same endpoint's spell was reported at its 5th failure (the default): to nobody here, none names it.
    const [failing] = await ops.knex()('events').where({ org_id: ops.orgId, type: ENDPOINT_FAILING }).select('*');
    expect(failing.data).toMatchObject({ endpoint_id: down.id, failed_attempts: 5, last_response_status: 503 });
    expect(await ops.knex()('webhook_deliveries').where({ event_id: failing.id }).pluck('endpoint_id')).toEqual([]);
    expect(star.id).not.toBe(named.id);
  });

  it("does not announce the exhaustion of an operational event's delivery (two failing endpoints would tell each other forever)", async () => {
    const named = await endpointNaming([DELIVERY_EXHAUSTED, ENDPOINT_RECOVERED], { defaultStatus: 500 });
    const down = await endpointNaming([DELIVERY_EXHAUSTED, ENDPOINT_RECOVERED], { defaultStatus: 500 });
    const event = {
      id: randomUUID(),
      type: ENDPOINT_RECOVERED,
      source: EVENT_SOURCES.notifications,
      orgId: ops.orgId,
      occurredAt: new Date().toISOString(),
      data: { endpoint_id: named.id, failing_since: new Date().toISOString(), recovered_at: new Date().toISOString() },
    };
    const deliveryId = deliveryIdFor(event.id, down.id);
    expect(
      (await publishUnqueued({ config, orm }, [event], [{ eventId: event.id, endpointId: down.id }])).deliveries,
    ).toEqual([{ eventId: event.id, endpointId: down.id, deliveryId }]);
    const handle = await env.client.workflow.start<typeof webhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
      taskQueue,
      workflowId: deliveryWorkflowId(deliveryId),
      args: [{ deliveryId }],
    });
    expect(await handle.result()).toBe('exhausted');
    expect(await ops.delivery(deliveryId)).toMatchObject({ status: 'exhausted', attempt_count: AUTOMATIC_ATTEMPTS });
    expect(
      await ops
        .knex()('events')
        .where({ org_id: ops.orgId, type: DELIVERY_EXHAUSTED })
        .whereRaw(`data->>'delivery_id' = ?`, [deliveryId]),
    ).toEqual([]);
  });
});
