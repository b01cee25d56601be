import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { loadConfig } from '../../lib/runtime/config';
import { migrate, openOrm, type Orm } from '../../db/orm';
import { createActivities } from '../../activities';
import { createDeliveryEngine } from '../../webhooks';
import { createProcessor } from '../../payments';
import { subscriptionWorkflowId, type NewSubscription } from '../../domain/subscription';
import { getSubscription, requestSignature, signAgreement } from '../../domain/subscription-messages';
import type { subscriptionWorkflow } from '../../workflows/subscription';
import { ensureSearchAttributes } from '../../lib/runtime/temporal';
import { SEARCH_ATTRIBUTE_NAMES } from '../../domain/search-attributes';
import { freshDatabase } from '../support/service';
import { timeSkippingEnv } from '../support/time-skipping';
import { newSubscription } from '../support/fixtures';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The draft lifetime's durable timer at production's default of 14 days, under Temporal's
 * time-skipping test server (docs/decisions/0368-unsigned-drafts-expire.md): to the hour, fired on
 * another worker than the one that armed it, and never once signed.
 */
describe('unsigned drafts expire on a durable timer, time skipped', () => {
  let env: TestWorkflowEnvironment;
  let orm: Orm;
  let worker: Worker;
  let running: Promise<void>;
  let activities: ReturnType<typeof createActivities>;
  const taskQueue = `ts-${randomUUID()}`;
  // No workflow cache: see test/foundation/durable-timers.test.ts.
  const newWorker = () =>
    Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
      activities,
      maxCachedWorkflows: 0,
    });

  beforeAll(async () => {
    env = await timeSkippingEnv();
    await ensureSearchAttributes(env.connection, 'default', SEARCH_ATTRIBUTE_NAMES);
    const config = loadConfig({ ...process.env, NODE_ENV: 'test', DATABASE_URL: await freshDatabase() });
    orm = await openOrm(config);
    await migrate(orm);
    activities = createActivities({
      orm,
      processor: createProcessor(config, { orm }),
      config,
      engine: createDeliveryEngine({ orm, config }),
    });
    worker = await newWorker();
    running = worker.run();
  }, 120_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await orm?.close();
    await env?.teardown();
  });

  /** A draft whose deadline is 14 days after its creation, as the API hands it in by default. */
  async function draft(): Promise<{
    start: NewSubscription;
    handle: ReturnType<typeof env.client.workflow.getHandle>;
  }> {
    const createdAt = new Date(await env.currentTimeMs()).toISOString();
    const start = newSubscription({
      createdAt,
      draftExpiresAt: new Date(Date.parse(createdAt) + 14 * DAY_MS).toISOString(),
    });
    const handle = await env.client.workflow.start<typeof subscriptionWorkflow>('subscriptionWorkflow', {
      workflowId: subscriptionWorkflowId(start.id),
      taskQueue,
      args: [{ start }],
    });
    return { start, handle };
  }
  const projected = async (id: string) =>
    (await orm.em.getConnection().execute('select status from subscriptions where id = ?', [id]))[0] as {
      status: string;
    };

  it('cancels a draft left unsigned 14 days, not an hour before, in seconds of real time', async () => {
    const realStart = Date.now();
    const { start, handle } = await draft();
    await handle.executeUpdate(requestSignature);

    await env.sleep(14 * DAY_MS - HOUR_MS); // an hour before the deadline
    expect((await handle.query(getSubscription)).status).toBe('pending_signature');
    await env.sleep(2 * HOUR_MS);
    expect(await handle.query(getSubscription)).toMatchObject({ status: 'cancelled', statusReason: 'expired' });
    const row = await projected(start.id);
    expect(row.status).toBe('cancelled');
    const [event] = await orm.em
      .getConnection()
      .execute(`select data from events where type = 'subscription.cancelled' and data->>'id' = ?`, [start.id]);
    expect(event?.data).toMatchObject({ reason: 'expired', cancelled_by: 'expiry', status_reason: 'expired' });
    expect(Date.now() - realStart).toBeLessThan(60_000);
  });

  // The time-skipping server skips no time while a task waits for a worker, so the worker that armed
  // the timer is stopped before the deadline, and another one is there when it fires.
  it('expires on time when the worker that armed its timer stopped and another took over', async () => {
    const { start, handle } = await draft();
    await env.sleep('1 day');
    worker.shutdown();
    await running;
    await env.sleep('12 days');
    expect((await handle.describe()).status.name).toBe('RUNNING');
    worker = await newWorker();
    running = worker.run();
    expect((await handle.query(getSubscription)).status).toBe('draft');
    await env.sleep('2 days');
    const ended = await handle.query(getSubscription);
    expect(ended).toMatchObject({ status: 'cancelled', statusReason: 'expired' });
    expect((await projected(start.id)).status).toBe('cancelled');
  });

  it('leaves a subscription signed before its deadline alone when the timer would have fired', async () => {
    const { start, handle } = await draft();
    await env.sleep('10 days');
    const signed = await handle.executeUpdate(signAgreement, {
      args: [{ signature: 'A. Investor', signedAt: '2026-11-22T09:00:00Z', ipAddress: null }],
    });
    expect(signed.status).toBe('pending_payment');
    await env.sleep('30 days');
    expect((await handle.query(getSubscription)).status).toBe('pending_payment');
    expect((await projected(start.id)).status).toBe('pending_payment');
  });
});
