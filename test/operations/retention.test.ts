import { randomUUID } from 'node:crypto';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { publishEvents, createDeliveryEngine } from '../../webhooks';
import { createProcessor } from '../../payments';
import { createWorker } from '../../worker/create-worker';
import { ensureRetentionSchedule } from '../../worker/retention-schedule';
import { scrape } from '../../lib/runtime/metrics';
import {
  RETENTION_WORKFLOW,
  retentionScheduleId,
  type RetentionResult,
  type RetentionTable,
} from '../../domain/retention-messages';
import type { ServiceEvent } from '../../domain/events';
import type { Config } from '../../lib/runtime/config';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { PATHS, registerHook } from '../webhooks/support/hooks';
import { Receiver } from '../webhooks/support/receiver';
import { until } from '../support/wait';

const prunedTotal = (text: string, table: RetentionTable) =>
  Number(
    text
      .split('\n')
      .find((l) => l.startsWith(`tranche_retention_rows_pruned_total{table="${table}"}`))
      ?.split(' ')
      .pop() ?? 0,
  );

/**
 * Retention, on the real stack: the prune workflow deletes rows past their window in
 * batches and counts them, keeps what is pending or recent, keeps everything when a window is 0,
 * and its Temporal Schedule is ensured by the worker.
 */
describe('retention prune', () => {
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;
  const knex = () => svc.orm.em.getConnection().getKnex();
  const old: string[] = [];
  const recent: string[] = [];

  const event = (): ServiceEvent => ({
    id: randomUUID(),
    type: 'subscription.approved',
    source: 'service.issuance',
    orgId: staff.orgId,
    occurredAt: new Date().toISOString(),
    data: { subscription_id: randomUUID() },
  });
  const deliveryOf = async (eventId: string): Promise<string> =>
    (await knex()('webhook_deliveries').where({ event_id: eventId }).first('id')).id;
  const prune = (taskQueue = svc.config.TEMPORAL_TASK_QUEUE, workflowId = `retention-test-${randomUUID()}`) =>
    svc.temporal.workflow.execute<(run?: never) => Promise<RetentionResult>>(RETENTION_WORKFLOW, {
      taskQueue,
      workflowId,
      args: [],
    });
  const addPaymentNotification = (daysAgo: number) =>
    knex().raw(
      `insert into payment_notifications (processor, event_id, event_type, outcome, received_at)
       values ('sandbox', ?, 'payment.succeeded', 'applied', now() - make_interval(days => ?))`,
      [randomUUID(), daysAgo],
    );
  const addIdempotencyKey = (expiresInHours: number) =>
    knex().raw(
      `insert into idempotency_keys (principal, method, path, key, request_hash, status, locked_until, expires_at)
       values ('test', 'POST', '/x', ?, 'h', 201, now(), now() + make_interval(hours => ?))`,
      [randomUUID(), expiresInHours],
    );

  beforeAll(async () => {
    [svc, receiver] = await Promise.all([
      startService({ set: 'B', env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true', RETENTION_BATCH_SIZE: '10' } }),
      Receiver.start(),
    ]);
    staff = await actor(svc, newOrg(), ['staff']);
    await registerHook(svc, receiver, staff, 'retention', ['subscription.approved']);
    for (let i = 0; i < 25; i++) old.push(event().id);
    for (let i = 0; i < 3; i++) recent.push(event().id);
    // Published one by one, oldest first, each delivered (one successful attempt).
    for (const id of [...old, ...recent]) await publishEvents(knex(), [{ ...event(), id }], { set: svc.set });
    await receiver.waitFor('retention', 28);
    await until('28 deliveries recorded a success', async () => {
      const [row] = await knex()('webhook_deliveries').where({ status: 'success' }).count({ n: '*' });
      return Number(row?.n) === 28 || undefined;
    });
    // 40 days old, deliveries untouched since; of those, one still pending and one waiting for a retry.
    await knex()('events')
      .whereIn('id', old)
      .update({ created_at: knex().raw("now() - interval '40 days'") });
    await knex()('webhook_deliveries')
      .whereIn('event_id', old)
      .update({
        created_at: knex().raw("now() - interval '40 days'"),
        updated_at: knex().raw("now() - interval '40 days'"),
      });
    await knex()('webhook_deliveries').where({ event_id: old[0] }).update({ status: 'pending' });
    await knex()('webhook_deliveries')
      .where({ event_id: old[1] })
      .update({ status: 'failed', next_attempt_at: knex().raw("now() + interval '1 hour'") });
    for (const days of [100, 95, 91, 10]) await addPaymentNotification(days);
    for (const hours of [-48, -2, -1, 5]) await addIdempotencyKey(hours);
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await receiver?.stop();
  });

  it('deletes what is past its window in batches, oldest first, counts it, and keeps pending and recent rows', async () => {
    const metricsBefore = (await scrape()).body;
    const removedDelivery = await deliveryOf(old[5]!);
    const workflowId = `retention-test-${randomUUID()}`;
    const result = await prune(svc.config.TEMPORAL_TASK_QUEUE, workflowId);

    expect(result.deleted).toEqual({
      events: 23,
      webhook_deliveries: 23,
      webhook_attempts: 23,
      payment_notifications: 3,
      idempotency_keys: 3,
    });
    // 10 rows a statement: the 28 events took at least three, notifications and keys one each.
    expect(result.statements).toBeGreaterThanOrEqual(5);

    const kept = [old[0]!, old[1]!, ...recent];
    const events = await knex()('events').where({ org_id: staff.orgId }).orderBy('seq').pluck('id');
    expect(events).toEqual(kept);
    expect(await knex()('webhook_deliveries').whereIn('event_id', old.slice(2)).pluck('id')).toEqual([]);
    expect(await knex()('webhook_attempts').where({ delivery_id: removedDelivery }).pluck('number')).toEqual([]);
    expect(await knex()('webhook_event_bodies').whereIn('event_id', old.slice(2)).pluck('event_id')).toEqual([]);
    expect(await knex()('webhook_event_bodies').whereIn('event_id', kept).pluck('event_id')).toHaveLength(5);
    expect(
      await knex()('payment_notifications')
        .where('received_at', '<', knex().raw("now() - interval '90 days'"))
        .pluck('event_id'),
    ).toEqual([]);
    expect(await knex()('payment_notifications').count({ n: '*' })).toEqual([{ n: '1' }]);
    expect(await knex()('idempotency_keys').where('expires_at', '<', knex().raw('now()')).pluck('key')).toEqual([]);

    // Gone from the events API and the delivery list, which still answer.
    const api = http(svc.baseUrl);
    // Events are listed once every older transaction of this database has ended.
    const listed = await until('the kept events to be listable', async () => {
      const r = await api.get('/notifications/events', staff.token);
      return r.status !== 200 || r.body.data.items.length >= kept.length ? r : undefined;
    });
    expect(listed.status).toBe(200);
    expect(listed.body.data.items.map((e: { event_id: string }) => e.event_id)).toEqual(kept);
    const deliveries = await api.get(PATHS.B.deliveries, staff.token);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.data.items).toHaveLength(5);
    expect((await api.get(`${PATHS.B.deliveries}/${removedDelivery}`, staff.token)).status).toBe(404);

    // Metrics (this process is the worker) and the run's memo in the Web UI.
    const metricsAfter = (await scrape()).body;
    expect(prunedTotal(metricsAfter, 'events') - prunedTotal(metricsBefore, 'events')).toBe(23);
    expect(prunedTotal(metricsAfter, 'webhook_attempts') - prunedTotal(metricsBefore, 'webhook_attempts')).toBe(23);
    expect(metricsAfter).toMatch(/^tranche_retention_last_run_timestamp_seconds \d/m);
    const { memo } = await svc.temporal.workflow.getHandle(workflowId).describe();
    expect(memo?.retention).toMatchObject({ stageName: 'finished', deleted: result.deleted });

    // Nothing left: a second run deletes nothing.
    expect((await prune()).deleted).toEqual(zero);
  }, 120_000);

  it('keeps everything forever when a window is 0 (expired Idempotency-Keys still go), and prunes ended deliveries', async () => {
    // The two kept deliveries have ended now: one succeeded, one exhausted its attempts.
    await knex()('webhook_deliveries').where({ event_id: old[0] }).update({ status: 'success' });
    await knex()('webhook_deliveries')
      .where({ event_id: old[1] })
      .update({ status: 'exhausted', next_attempt_at: null });
    await addPaymentNotification(200);
    await addIdempotencyKey(-3);
    const taskQueue = `retention-forever-${randomUUID()}`;
    const config: Config = {
      ...svc.config,
      TEMPORAL_TASK_QUEUE: taskQueue,
      RETENTION_EVENTS_DAYS: 0,
      RETENTION_PAYMENT_NOTIFICATIONS_DAYS: 0,
    };
    const worker = await createWorker({
      config,
      workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
      deps: {
        orm: svc.orm,
        config,
        processor: createProcessor(config, { orm: svc.orm }),
        engine: createDeliveryEngine({ orm: svc.orm, config }),
      },
    });
    const forever = await worker.runUntil(prune(taskQueue));
    expect(forever.deleted).toEqual({ ...zero, idempotency_keys: 1 });
    expect(await knex()('events').whereIn('id', [old[0]!, old[1]!]).pluck('id')).toHaveLength(2);
    expect(await knex()('payment_notifications').count({ n: '*' })).toEqual([{ n: '2' }]);

    // With the windows back (30 and 90 days), both go.
    expect((await prune()).deleted).toMatchObject({ events: 2, webhook_deliveries: 2, payment_notifications: 1 });
    expect(await knex()('events').where({ org_id: staff.orgId }).orderBy('seq').pluck('id')).toEqual(recent);
  }, 120_000);

  it('takes windows in seconds when they are set (a soak), in place of the days', async () => {
    // The three recent events, delivered two minutes ago; notifications two minutes old and new.
    await knex()('events')
      .whereIn('id', recent)
      .update({ created_at: knex().raw("now() - interval '2 minutes'") });
    await knex()('webhook_deliveries')
      .whereIn('event_id', recent)
      .update({ updated_at: knex().raw("now() - interval '2 minutes'") });
    for (const ago of ['2 minutes', '0 seconds'])
      await knex().raw(
        `insert into payment_notifications (processor, event_id, event_type, outcome, received_at)
         values ('sandbox', ?, 'payment.succeeded', 'applied', now() - ?::interval)`,
        [randomUUID(), ago],
      );
    const taskQueue = `retention-seconds-${randomUUID()}`;
    const config: Config = {
      ...svc.config,
      TEMPORAL_TASK_QUEUE: taskQueue,
      RETENTION_EVENTS_SECONDS: 60,
      RETENTION_PAYMENT_NOTIFICATIONS_SECONDS: 60,
    };
    const worker = await createWorker({
      config,
      workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
      deps: {
        orm: svc.orm,
        config,
        processor: createProcessor(config, { orm: svc.orm }),
        engine: createDeliveryEngine({ orm: svc.orm, config }),
      },
    });
    const result = await worker.runUntil(prune(taskQueue));
    // The 10-day-old notification left by the tests before goes too; the new one stays.
    expect(result.deleted).toEqual({
      ...zero,
      events: 3,
      webhook_deliveries: 3,
      webhook_attempts: 3,
      payment_notifications: 2,
    });
    expect(await knex()('payment_notifications').count({ n: '*' })).toEqual([{ n: '1' }]);
  }, 120_000);

  it('is run by a Temporal Schedule the worker ensures at start, idempotently', async () => {
    const taskQueue = `retention-schedule-${randomUUID()}`;
    const handle = svc.temporal.schedule.getHandle(retentionScheduleId(taskQueue));
    try {
      await ensureRetentionSchedule(svc.temporal, {
        TEMPORAL_TASK_QUEUE: taskQueue,
        RETENTION_PRUNE_INTERVAL_MINUTES: 10,
      });
      await ensureRetentionSchedule(svc.temporal, {
        TEMPORAL_TASK_QUEUE: taskQueue,
        RETENTION_PRUNE_INTERVAL_MINUTES: 10,
      });
      const made = await handle.describe();
      expect(made.spec.intervals).toEqual([expect.objectContaining({ every: 600_000 })]);
      expect(made.action).toMatchObject({ workflowType: RETENTION_WORKFLOW, taskQueue });
      expect(made.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP);

      // A new interval in the configuration reaches the existing schedule.
      await ensureRetentionSchedule(svc.temporal, {
        TEMPORAL_TASK_QUEUE: taskQueue,
        RETENTION_PRUNE_INTERVAL_MINUTES: 15,
      });
      expect((await handle.describe()).spec.intervals).toEqual([expect.objectContaining({ every: 900_000 })]);
      // A soak's interval in seconds replaces the minutes.
      await ensureRetentionSchedule(svc.temporal, {
        TEMPORAL_TASK_QUEUE: taskQueue,
        RETENTION_PRUNE_INTERVAL_MINUTES: 15,
        RETENTION_PRUNE_INTERVAL_SECONDS: 30,
      });
      expect((await handle.describe()).spec.intervals).toEqual([expect.objectContaining({ every: 30_000 })]);
    } finally {
      await handle.delete().catch(() => undefined);
    }
  });
});

const zero = {
  events: 0,
  webhook_deliveries: 0,
  webhook_attempts: 0,
  payment_notifications: 0,
  idempotency_keys: 0,
};
