import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { loadConfig } from '../../lib/runtime/config';
import { migrate, openOrm, type Orm } from '../../db/orm';
import { createActivities } from '../../activities';
import { createDeliveryEngine } from '../../webhooks';
import { createProcessor } from '../../payments';
import { subscriptionWorkflowId } from '../../domain/subscription';
import { cancel, getSubscription, requestSignature, signAgreement } from '../../domain/subscription-messages';
import type { subscriptionWorkflow } from '../../workflows/subscription';
import { ensureSearchAttributes } from '../../lib/runtime/temporal';
import { SEARCH_ATTRIBUTE_NAMES } from '../../domain/search-attributes';
import { freshDatabase } from '../support/service';
import { timeSkippingEnv } from '../support/time-skipping';
import { newSubscription as newSubscriptionInput } from '../support/fixtures';

describe('durable timers under time skipping', () => {
  let env: TestWorkflowEnvironment;
  let orm: Orm;
  let worker: Worker;
  let running: Promise<void>;
  let activities: ReturnType<typeof createActivities>;
  const taskQueue = `ts-${randomUUID()}`;
  // No workflow cache, hence no sticky queue: the time-skipping server does not hand a stopped
  // worker's sticky tasks back to the shared queue, while a real cluster would after 5 s.
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
      processor: createProcessor(config),
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

  const newSubscription = () => newSubscriptionInput();

  it('carries a subscription on after its worker was stopped for a day', async () => {
    const start = newSubscription();
    const handle = await env.client.workflow.start<typeof subscriptionWorkflow>('subscriptionWorkflow', {
      workflowId: subscriptionWorkflowId(start.id),
      taskQueue,
      args: [{ start }],
    });
    expect((await handle.executeUpdate(requestSignature)).status).toBe('pending_signature');

    worker.shutdown();
    await running;
    await env.sleep('1 day');
    expect((await handle.describe()).status.name).toBe('RUNNING');

    worker = await newWorker();
    running = worker.run();
    const signed = await handle.executeUpdate(signAgreement, {
      args: [{ signature: 'A. Investor', signedAt: '2026-11-22T09:00:00Z', ipAddress: null }],
    });
    expect(signed).toMatchObject({ status: 'pending_payment', subscription_agreement_signed: true });
    const [row] = await orm.em
      .getConnection()
      .execute('select status, version from subscriptions where id = ?', [start.id]);
    expect(row).toEqual({ status: 'pending_payment', version: 3 });
  });

  it('keeps a cancelled subscription open for 90 days of late payment notices, then ends it, in seconds of real time', async () => {
    const start = newSubscription();
    const id = start.id;
    const handle = await env.client.workflow.start<typeof subscriptionWorkflow>('subscriptionWorkflow', {
      workflowId: subscriptionWorkflowId(id),
      taskQueue,
      args: [{ start }],
    });
    const cancelled = await handle.executeUpdate(cancel);
    expect(cancelled.status).toBe('cancelled');

    const realStart = Date.now();
    await env.sleep('89 days');
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect((await handle.query(getSubscription)).status).toBe('cancelled');

    await env.sleep('2 days');
    const result = await handle.result();
    expect(result.status).toBe('cancelled');
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    // 91 days of workflow time passed in a few seconds of ours.
    expect(Date.now() - realStart).toBeLessThan(60_000);

    const [row] = await orm.em.getConnection().execute('select status from subscriptions where id = ?', [id]);
    expect(row).toEqual({ status: 'cancelled' });
  });
});
