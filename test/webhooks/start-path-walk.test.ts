import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../../lib/runtime/config';
import type { Orm } from '../../db/orm';
import { endpointStore, secretBoxFrom } from '../../webhooks';
import { startQueuedDeliveries } from '../../webhooks/dispatch/workflow-shape';
import { unclaimedStarts } from '../../webhooks/attempts/unclaimed-starts';
import { deliveryWorkflowId } from '../../domain/webhook-messages';
import { anEvent, publish, publishUnqueued } from './support/publish';
import { webhookHarness } from './support/webhook-harness';

/** One call's window of endpoints (webhooks/dispatch/workflow-shape.ts), and enough endpoints for a second one. */
const WINDOW = 64;
const ENDPOINTS = WINDOW + 2;

/**
 * `workflow` shape's start path walks past full endpoints
 * (docs/decisions/0340-workflow-starts-within-the-endpoints-room.md): a call goes on window after
 * window, round to where it began, until it starts something, and then stops. Endpoint ids are
 * random, so the test makes its endpoints first and gives each its part by id order. Every endpoint
 * is limited to one attempt at a time and has one delivery queued; a full one also has a delivery
 * started and not yet claimed, in the start path's own count. Nobody polls the task queue: the
 * calls are made by hand, on the real database and server, and the workflows only need to exist.
 */
describe("the workflow shape's start path walks past full endpoints", () => {
  let config: Config;
  let orm: Orm;
  let connection: Connection;
  let temporal: Client;
  const taskQueue = `walk-${randomUUID()}`;
  const knex = () => orm.em.getConnection().getKnex();
  const path = { unclaimed: unclaimedStarts(), defaultMaxInFlight: 32 };
  /** Endpoint ids in the walk's order, each with its queued delivery and its started one. */
  let endpoints: { id: string; queued: string; started: string }[] = [];
  const call = (after?: string) =>
    startQueuedDeliveries({ knex, temporal, taskQueue }, path, after ? { after } : undefined);

  beforeAll(async () => {
    ({ config, orm } = await webhookHarness());
    connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
    temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
    const store = endpointStore(orm, secretBoxFrom(config));
    const orgId = randomUUID();
    const ids: string[] = [];
    for (let n = 0; n < ENDPOINTS; n++) {
      const { row } = await store.create(orgId, {
        url: `http://127.0.0.1:9/walk-${n}`,
        description: `walk ${n}`,
        eventTypes: ['*'],
        maxInFlight: 1,
      });
      ids.push(row.id);
    }
    ids.sort();
    const aimed = (id: string) => {
      const event = anEvent(orgId);
      return { event, target: { eventId: event.id, endpointId: id } };
    };
    const queued = ids.map(aimed);
    const started = ids.map(aimed);
    const q = await publish(
      { orm, config },
      queued.map((a) => a.event),
      queued.map((a) => a.target),
    );
    const s = await publishUnqueued(
      { orm, config },
      started.map((a) => a.event),
      started.map((a) => a.target),
    );
    const deliveryOf = (p: typeof q, id: string) => p.deliveries.find((d) => d.endpointId === id)!.deliveryId;
    endpoints = ids.map((id) => ({ id, queued: deliveryOf(q, id), started: deliveryOf(s, id) }));
    // Every endpoint full but the last: its one slot is taken by a start no attempt has claimed yet.
    for (const e of endpoints.slice(0, -1)) path.unclaimed.add(e.started, e.id);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(
      endpoints.map((e) =>
        temporal.workflow
          .getHandle(deliveryWorkflowId(e.queued))
          .terminate('test over')
          .catch(() => undefined),
      ),
    );
    await connection?.close();
    await orm?.close();
  });

  const queuedFor = async (id: string) => knex()('webhook_queue').where({ endpoint_id: id }).pluck('delivery_id');

  it('starts the one endpoint with room behind a whole window of full ones, from the first endpoint', async () => {
    const last = endpoints.at(-1)!;
    // Seen failing before bd24ef0: the call stopped after the first window, answering 0.
    expect(await call()).toBe(1);
    expect(await queuedFor(last.id)).toEqual([]);
    const described = await temporal.workflow.getHandle(deliveryWorkflowId(last.queued)).describe();
    expect(described.taskQueue).toBe(taskQueue);
    // The full endpoints' deliveries wait in the queue.
    for (const e of endpoints.slice(0, -1)) expect(await queuedFor(e.id)).toEqual([e.queued]);
  });

  it('goes round past the last endpoint to one before where the call began', async () => {
    // The last endpoint is full now (its start counts until an attempt claims it); the first has room.
    const [first] = endpoints;
    path.unclaimed.claimed(first!.started);
    expect(await call(endpoints[9]!.id)).toBe(1);
    expect(await queuedFor(first!.id)).toEqual([]);
    await temporal.workflow.getHandle(deliveryWorkflowId(first!.queued)).describe();
  });

  it('answers 0 once round, wherever it begins, when every endpoint is full', async () => {
    for (const after of [undefined, endpoints[0]!.id, endpoints[30]!.id, endpoints.at(-1)!.id]) {
      expect({ after, answer: await call(after) }).toEqual({ after, answer: 0 });
    }
    const left = await knex()('webhook_queue').whereIn(
      'endpoint_id',
      endpoints.map((e) => e.id),
    );
    expect(left).toHaveLength(ENDPOINTS - 2);
  });
});
