import { testDataConverter } from '../support/data-converter';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../../lib/runtime/config';
import type { Orm } from '../../db/orm';
import { deliveryIdFor } from './support/delivery-id';
import { actor, newOrg } from '../support/fixtures';
import { startService } from '../support/service';
import { Receiver } from './support/receiver';
import { until } from '../support/wait';
import { registerHook } from './support/hooks';
import { exited, printed, runTs } from './support/processes';
import { anEvent, publish, publishUnqueued } from './support/publish';
import { gaps, timerPending, webhookHarness, webhookOps } from './support/webhook-harness';

describe('nothing is lost when a process dies', () => {
  let receiver: Receiver;
  beforeAll(async () => (receiver = await Receiver.start()));
  afterAll(() => receiver.stop());

  it('delivers what was committed while no worker ran, once one starts, and what a lost notification left queued', async () => {
    const svc = await startService({
      set: 'A',
      env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true', WEBHOOK_SWEEP_INTERVAL_MS: '500' },
    });
    try {
      const staff = await actor(svc, newOrg(), ['staff']);
      const endpoint = await registerHook(svc, receiver, staff, 'no-worker', ['subscription.approved']);
      const knex = svc.orm.em.getConnection().getKnex();

      // Committed with no dispatcher listening: the notification reaches nobody.
      await svc.stopWorker();
      const early = anEvent(staff.orgId);
      await publish(svc, [early]);
      expect(await knex('webhook_queue').where({ endpoint_id: endpoint.id }).count('* as n')).toEqual([{ n: '1' }]);
      await svc.startWorker();
      const [got] = await receiver.waitFor('no-worker', 1, 30_000);
      expect(got!.verified).toBe(true);
      expect(got!.headers['x-service-event-id']).toBe(early.id);
      expect(got!.headers['x-service-delivery-id']).toBe(deliveryIdFor(early.id, endpoint.id));

      // Queued without a notification (as if it was lost with the listener's connection): the
      // sweep's safety net takes it.
      const late = anEvent(staff.orgId);
      const { deliveries } = await publishUnqueued(svc, [late]);
      await knex('webhook_queue').insert({
        delivery_id: deliveries[0]!.deliveryId,
        endpoint_id: endpoint.id,
        org_id: staff.orgId,
        event_seq: knex.raw('(select seq from events where id = ?)', [late.id]),
      });
      const both = await receiver.waitFor('no-worker', 2, 30_000);
      expect(both[1]!.headers['x-service-event-id']).toBe(late.id);
    } finally {
      await svc.stop();
    }
  }, 120_000);

  it('plans and delivers an event stored in the outbox but never planned', async () => {
    const svc = await startService({
      set: 'A',
      env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true', WEBHOOK_SWEEP_INTERVAL_MS: '500', OUTBOX_RELAY_GRACE_MS: '500' },
    });
    try {
      const staff = await actor(svc, newOrg(), ['staff']);
      const endpoint = await registerHook(svc, receiver, staff, 'stored-only', ['subscription.approved']);
      const event = anEvent(staff.orgId);
      await svc.orm.em
        .getConnection()
        .getKnex()('events')
        .insert({
          id: event.id,
          org_id: event.orgId,
          type: event.type,
          source: event.source,
          data: JSON.stringify(event.data),
          occurred_at: event.occurredAt,
        });
      const [got] = await receiver.waitFor('stored-only', 1, 30_000);
      expect(got!.headers['x-service-delivery-id']).toBe(deliveryIdFor(event.id, endpoint.id));
    } finally {
      await svc.stop();
    }
  }, 120_000);

  describe('a worker killed during backoff', () => {
    let config: Config;
    let orm: Orm;
    let connection: Connection;
    const workers: ChildProcess[] = [];
    const taskQueue = `crash-${randomUUID()}`;

    beforeAll(async () => {
      ({ config, orm } = await webhookHarness());
      connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS!, connectTimeout: '10s' });
    });
    afterAll(async () => {
      for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
      await Promise.all(workers.map(exited));
      await connection?.close();
      await orm?.close();
    });

    // The real worker entry point (worker/main.ts) in its own process, against the test stack.
    const startWorker = async () => {
      const child = runTs('worker/main.ts', {
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        DATABASE_URL: config.DATABASE_URL,
        TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!,
        TEMPORAL_TASK_QUEUE: taskQueue,
        // The receiver listens on loopback; the worker's connect-time SSRF guard must allow it.
        WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
        // A dead dispatcher's attempt is closed this soon (its liveness lock went with it).
        WEBHOOK_STUCK_AFTER_MS: '3000',
        WEBHOOK_SWEEP_INTERVAL_MS: '500',
      });
      workers.push(child);
      await printed(child, 'worker started');
      return child;
    };

    it('finishes the delivery after a restart with no attempt missing', async () => {
      const client = new Client({ connection, dataConverter: testDataConverter() });
      const ops = webhookOps({ config, orm, client, taskQueue, receiver });
      const endpoint = await ops.endpoint('worker-crash', { responses: [500], defaultStatus: 200 });

      const first = await startWorker();
      const { deliveryId, handle } = await ops.publish(endpoint.id);
      await ops.attemptsReach(deliveryId, 1);
      // Observed, not slept on: attempt 1's result is recorded and its delivery workflow holds the 30 s timer.
      await until('timer pending', async () =>
        (await handle.describe().catch(() => undefined))?.status.name === 'RUNNING' && (await timerPending(handle))
          ? true
          : undefined,
      );
      first.kill('SIGKILL'); // mid-backoff: the 30 s timer lives only in Temporal now
      expect((await exited(first)).signal).toBe('SIGKILL');
      expect(await ops.delivery(deliveryId)).toMatchObject({ status: 'failed', attempt_count: 1 });

      // Past the 30 s timer with no worker alive: the attempt is due but nobody can make it.
      const [firstAttempt] = await ops.attempts(deliveryId);
      await new Promise((r) =>
        setTimeout(r, Math.max(0, new Date(firstAttempt!.attempted_at).getTime() + 33_000 - Date.now())),
      );
      expect(await ops.attempts(deliveryId)).toHaveLength(1);
      const second = await startWorker();
      expect(await handle.result()).toBe('success');

      const attempts = await ops.attempts(deliveryId);
      expect(attempts.map((a) => [a.number, a.response_status])).toEqual([
        [1, 500],
        [2, 200],
      ]);
      expect(gaps(attempts)[0]).toBeGreaterThanOrEqual(30_000);
      const got = await receiver.received('worker-crash');
      expect(got.map((d) => [d.verified, d.headers['x-service-delivery-id']])).toEqual([
        [true, deliveryId],
        [true, deliveryId],
      ]);
      second.kill('SIGTERM');
      await exited(second);
    }, 180_000);

    it('records an attempt whose worker died mid-POST, and the schedule goes on from it', async () => {
      const client = new Client({ connection, dataConverter: testDataConverter() });
      const ops = webhookOps({ config, orm, client, taskQueue, receiver });
      // The endpoint holds the first request 20 s: long enough to kill the worker while it waits.
      const endpoint = await ops.endpoint('mid-post', { delayMs: 20_000 });

      const first = await startWorker();
      const { deliveryId, handle } = await ops.publish(endpoint.id);
      // Observed: the dispatcher's request reached the endpoint and the attempt's start is recorded, its result not yet.
      await receiver.waitFor('mid-post', 1);
      expect(await ops.attempts(deliveryId)).toMatchObject([{ number: 1, duration_ms: null }]);
      first.kill('SIGKILL');
      expect((await exited(first)).signal).toBe('SIGKILL');

      await ops.replan('mid-post', { delayMs: 0 });
      const second = await startWorker();
      await until(
        'delivery workflow started',
        () =>
          handle.describe().then(
            () => true,
            () => undefined,
          ),
        { timeoutMs: 60_000 },
      );
      expect(await handle.result()).toBe('success');
      const attempts = await ops.attempts(deliveryId);
      expect(attempts.map((a) => [a.number, a.response_status, a.error])).toEqual([
        [1, null, 'worker stopped before the result was recorded; the endpoint may have received it'],
        [2, 200, null],
      ]);
      expect(await ops.delivery(deliveryId)).toMatchObject({ status: 'success', attempt_count: 2 });
      second.kill('SIGTERM');
      await exited(second);
    }, 180_000);
  });
});
