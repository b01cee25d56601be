import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowClientInterceptor } from '@temporalio/client';
import type { Config } from '../../lib/runtime/config';
import type { Orm } from '../../db/orm';
import { startQueuedDeliveries } from '../../webhooks/dispatch/workflow-shape';
import { unclaimedStarts } from '../../webhooks/attempts/unclaimed-starts';
import { handOverOrdered, handOverRetries } from '../../webhooks/dispatch/handover';
import { stopDeletedEndpoints } from '../../webhooks/endpoints/deleted-endpoints';
import { deliveryWorkflowId, orderedWorkflowId, retrySchedulerWorkflowId } from '../../domain/webhook-messages';
import { Receiver } from './support/receiver';
import { anEvent, publish, publishUnqueued } from './support/publish';
import { webhookHarness, webhookOps } from './support/webhook-harness';

/** A promise and the function that settles it. */
function opening() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Rows taken for a call to Temporal are leased by a committed statement, never locked across the
 * call (docs/decisions/0332-leases-not-locks.md): while Temporal takes its time to answer, no
 * transaction of the service holds a transaction id, which every reader waiting for older
 * transactions (the events list, vacuum) would wait on. Each path below is held inside its call to
 * Temporal (a client interceptor, on the real server) while the test looks at the database.
 */
describe('calls to Temporal hold no transaction open', () => {
  let config: Config;
  let orm: Orm;
  let connection: Connection;
  let receiver: Receiver;
  let ops: ReturnType<typeof webhookOps>;
  const taskQueue = `leases-${randomUUID()}`; // nobody polls it: the workflows only need to exist
  const started: string[] = [];

  /** Holds each call until `released`; `refuse` makes the calls fail as an unreachable Temporal would. */
  const gate = {
    entered: opening(),
    released: opening(),
    refuse: false,
    reset() {
      this.entered = opening();
      this.released = opening();
    },
    async pass<T>(next: () => Promise<T>): Promise<T> {
      this.entered.resolve();
      await this.released.promise;
      if (this.refuse) throw new Error('Temporal refused the call (test)');
      return next();
    },
  };
  const held: WorkflowClientInterceptor = {
    start: (input, next) => gate.pass(() => next(input)),
    startWithDetails: (input, next) => gate.pass(() => next(input)),
    signal: (input, next) => gate.pass(() => next(input)),
    signalWithStart: (input, next) => gate.pass(() => next(input)),
  };
  let temporal: Client;
  const knex = () => orm.em.getConnection().getKnex();

  /** Transactions of this database holding a transaction id (a lock taken, a row written). */
  const openTransactionIds = async (): Promise<number> =>
    (
      await knex().raw(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and backend_xid is not null`,
      )
    ).rows[0].n;

  /** Runs `call` held inside Temporal, answers the open transaction ids seen meanwhile and what the call answered. */
  async function heldInside<T>(call: () => Promise<T>): Promise<{ openWhileHeld: number; answer: T }> {
    gate.reset();
    const answer = call();
    await gate.entered.promise;
    const openWhileHeld = await openTransactionIds();
    gate.released.resolve();
    return { openWhileHeld, answer: await answer };
  }

  beforeAll(async () => {
    ({ config, orm } = await webhookHarness());
    connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
    temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, interceptors: { workflow: [held] } });
    receiver = await Receiver.start();
    ops = webhookOps({ config, orm, client: temporal, taskQueue, receiver });
  });
  afterAll(async () => {
    const plain = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
    await Promise.all(
      started.map((id) =>
        plain.workflow
          .getHandle(id)
          .terminate('test over')
          .catch(() => undefined),
      ),
    );
    await connection?.close();
    await receiver?.stop();
    await orm?.close();
  });
  afterEach(() => void (gate.refuse = false));

  /** One delivery recorded for a new endpoint and taken off the queue, as each test then places it. */
  async function unqueuedDelivery(name: string) {
    const endpoint = await ops.endpoint(`lease-${name}-${randomUUID().slice(0, 8)}`);
    const event = anEvent(ops.orgId);
    const { deliveries } = await publishUnqueued(
      { orm, config },
      [event],
      [{ eventId: event.id, endpointId: endpoint.id }],
    );
    return { endpoint, event, deliveryId: deliveries[0]!.deliveryId };
  }

  it("the workflow shape's start path: leased while the start goes, deleted once it is started", async () => {
    const endpoint = await ops.endpoint(`lease-start-${randomUUID().slice(0, 8)}`);
    const event = anEvent(ops.orgId);
    const { deliveries } = await publish({ orm, config }, [event], [{ eventId: event.id, endpointId: endpoint.id }]);
    const deliveryId = deliveries[0]!.deliveryId;
    started.push(deliveryWorkflowId(deliveryId));
    const deps = { knex, temporal, taskQueue };
    const path = { unclaimed: unclaimedStarts(), defaultMaxInFlight: 32 };

    // Refused: the row stays queued and free, and the next call takes it at once.
    gate.refuse = true;
    const refused = await heldInside(() => startQueuedDeliveries(deps, path));
    // Seen failing before the fix: 1 (the call's FOR UPDATE transaction, open across the start).
    expect(refused).toEqual({ openWhileHeld: 0, answer: 0 });
    expect(await knex()('webhook_queue').where({ delivery_id: deliveryId }).first('leased_until')).toEqual({
      leased_until: null,
    });

    gate.refuse = false;
    expect(await heldInside(() => startQueuedDeliveries(deps, path))).toEqual({ openWhileHeld: 0, answer: 1 });
    expect(await knex()('webhook_queue').where({ delivery_id: deliveryId })).toEqual([]);
    const described = await temporal.workflow.getHandle(deliveryWorkflowId(deliveryId)).describe();
    expect(described.taskQueue).toBe(taskQueue);
  });

  it('the retry hand-over: leased while the signal goes, deleted once it is in the history', async () => {
    const { endpoint, event, deliveryId } = await unqueuedDelivery('retry');
    await knex()('webhook_schedule_handovers').insert({
      delivery_id: deliveryId,
      endpoint_id: endpoint.id,
      event_type: event.type,
    });
    const deps = { knex, temporal, taskQueue, shards: 1 };
    started.push(retrySchedulerWorkflowId(taskQueue, 0));

    gate.refuse = true;
    const refused = heldInside(() => handOverRetries(deps));
    await expect(refused).rejects.toThrow('Temporal refused the call (test)');
    expect(await knex()('webhook_schedule_handovers').where({ delivery_id: deliveryId }).first('leased_until')).toEqual(
      { leased_until: null },
    );

    gate.refuse = false;
    // Seen failing before the fix: openWhileHeld 1.
    expect(await heldInside(() => handOverRetries(deps))).toEqual({ openWhileHeld: 0, answer: 1 });
    expect(await knex()('webhook_schedule_handovers').where({ delivery_id: deliveryId })).toEqual([]);
  });

  it('the ordered hand-over: leased while the signals go, deleted once handed over', async () => {
    const endpoint = await ops.endpoint(`lease-ordered-${randomUUID().slice(0, 8)}`);
    const events = [anEvent(ops.orgId), anEvent(ops.orgId)];
    const { deliveries } = await publish(
      { orm, config },
      events,
      events.map((e) => ({ eventId: e.id, endpointId: endpoint.id })),
    );
    const ids = deliveries.map((d) => d.deliveryId);
    const subscriptionId = randomUUID();
    await knex()('webhook_queue').whereIn('delivery_id', ids).update({ ordered_key: subscriptionId });
    started.push(orderedWorkflowId(endpoint.id, subscriptionId));

    // Seen failing before the fix: openWhileHeld 1.
    expect(await heldInside(() => handOverOrdered({ knex, temporal, taskQueue }))).toEqual({
      openWhileHeld: 0,
      answer: 2,
    });
    expect(await knex()('webhook_queue').whereIn('delivery_id', ids)).toEqual([]);
  });

  it("a deleted endpoint's cleanup: leased while the signals go, removed once its last page is stopped", async () => {
    const { endpoint, deliveryId } = await unqueuedDelivery('deleted');
    // Waiting on its workflow's schedule, so the cleanup signals it.
    await knex()('webhook_deliveries').where({ id: deliveryId }).update({ next_attempt_at: knex().fn.now() });
    await knex()('webhook_endpoints').where({ id: endpoint.id }).update({ deleted_at: knex().fn.now() });
    await knex()('webhook_endpoint_cleanups').insert({ endpoint_id: endpoint.id });

    // Seen failing before the fix: openWhileHeld 1.
    expect(await heldInside(() => stopDeletedEndpoints({ knex, temporal }))).toEqual({ openWhileHeld: 0, answer: 1 });
    expect(await knex()('webhook_endpoint_cleanups').where({ endpoint_id: endpoint.id })).toEqual([]);
    expect(await knex()('webhook_deliveries').where({ id: deliveryId }).first('status', 'next_attempt_at')).toEqual({
      status: 'failed',
      next_attempt_at: null,
    });
  });
});
