import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../../lib/config';
import type { Orm } from '../../db/orm';
import { uuidFromName } from '../../lib/ids';
import { actor, newOrg } from '../support/fixtures';
import { startService } from '../support/service';
import { eventually, Receiver } from './support/receiver';
import { registerHook } from './support/hooks';
import { exited, printed, runTs } from './support/processes';
import { gaps, timerPending, webhookHarness, webhookOps } from './support/webhook-harness';
import { IN_DOUBT_ERROR } from '../../activities/webhook-attempt';

describe('nothing is lost when a process dies', () => {
  let receiver: Receiver;
  beforeAll(async () => (receiver = await Receiver.start()));
  afterAll(() => receiver.stop());

  it('delivers an event whose publisher was killed between the outbox commit and the dispatch', async () => {
    const svc = await startService({
      set: 'A',
      env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true', OUTBOX_RELAY_GRACE_MS: '2000', OUTBOX_RELAY_INTERVAL_MS: '500' },
    });
    try {
      const staff = await actor(svc, newOrg(), ['staff']);
      const endpoint = await registerHook(svc, receiver, staff, 'outbox-crash', ['subscription.approved']);
      const event = {
        id: randomUUID(),
        type: 'subscription.approved',
        source: 'service.issuance',
        orgId: staff.orgId,
        occurredAt: new Date().toISOString(),
        data: { id: randomUUID() },
      };

      const publisher = runTs('test/webhooks/support/publish-then-die.ts', {
        DATABASE_URL: svc.config.DATABASE_URL,
        EVENT: JSON.stringify(event),
        LOG_LEVEL: 'warn',
      });
      expect(await exited(publisher)).toEqual({ code: null, signal: 'SIGKILL' });
      const [row] = await svc.orm.em
        .getConnection()
        .execute<{ dispatched_at: Date | null }[]>('select dispatched_at from events where id = ?', [event.id]);
      expect(row).toEqual({ dispatched_at: null }); // committed, never handed to Temporal

      const [got] = await receiver.waitFor('outbox-crash', 1, 30_000);
      expect(got!.verified).toBe(true);
      expect(got!.headers['x-service-event-id']).toBe(event.id);
      expect(got!.headers['x-service-delivery-id']).toBe(uuidFromName(event.id, endpoint.id));
      await eventually(async () =>
        (await svc.orm.em.getConnection().execute('select dispatched_at from events where id = ?', [event.id]))[0]
          ?.dispatched_at
          ? true
          : undefined,
      );
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
      });
      workers.push(child);
      await printed(child, 'worker started');
      return child;
    };

    it('finishes the delivery after a restart with no attempt missing', async () => {
      const client = new Client({ connection });
      const ops = webhookOps({ config, orm, client, taskQueue, receiver });
      const endpoint = await ops.endpoint('worker-crash', { responses: [500], defaultStatus: 200 });

      const first = await startWorker();
      const { deliveryId, handle } = await ops.publish(endpoint.id);
      await ops.attemptsReach(deliveryId, 1);
      // Observed, not slept on: attempt 1's result is recorded and its delivery workflow holds the 30 s timer.
      await eventually(
        async () =>
          (await handle.describe().catch(() => undefined))?.status.name === 'RUNNING' && (await timerPending(handle))
            ? true
            : undefined,
        30_000,
        'timer pending',
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
      const client = new Client({ connection });
      const ops = webhookOps({ config, orm, client, taskQueue, receiver });
      // The endpoint holds the first request 20 s: long enough to kill the worker while it waits.
      const endpoint = await ops.endpoint('mid-post', { delayMs: 20_000 });

      const first = await startWorker();
      const { deliveryId, handle } = await ops.publish(endpoint.id);
      // Observed: the request reached the endpoint and the attempt's start is recorded, its result not yet.
      await receiver.waitFor('mid-post', 1);
      expect(await ops.attempts(deliveryId)).toMatchObject([{ number: 1, duration_ms: null }]);
      first.kill('SIGKILL');
      expect((await exited(first)).signal).toBe('SIGKILL');

      await ops.replan('mid-post', { delayMs: 0 });
      const second = await startWorker();
      await eventually(
        () =>
          handle.describe().then(
            () => true,
            () => undefined,
          ),
        60_000,
        'delivery workflow started',
      );
      expect(await handle.result()).toBe('success');
      const attempts = await ops.attempts(deliveryId);
      expect(attempts.map((a) => [a.number, a.response_status, a.error])).toEqual([
        [1, null, IN_DOUBT_ERROR],
        [2, 200, null],
      ]);
      expect(await ops.delivery(deliveryId)).toMatchObject({ status: 'success', attempt_count: 2 });
      second.kill('SIGTERM');
      await exited(second);
    }, 180_000);
  });
});
