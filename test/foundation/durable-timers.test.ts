import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { loadConfig } from '../../lib/config';
import { migrate, openOrm, type Orm } from '../../db/orm';
import { createActivities } from '../../activities';
import { relayOnlyDispatcher } from '../../activities/event-dispatcher';
import { createProcessor } from '../../payments';
import { subscriptionWorkflowId, type NewSubscription } from '../../domain/subscription';
import { cancel, getSubscription } from '../../workflows/subscription-messages';
import type { subscriptionWorkflow } from '../../workflows/subscription';
import { ensureSearchAttributes } from '../../lib/temporal';
import { freshDatabase } from '../support/service';
import { timeSkippingEnv } from '../support/time-skipping';

describe('durable timers under time skipping', () => {
  let env: TestWorkflowEnvironment;
  let orm: Orm;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = `ts-${randomUUID()}`;

  beforeAll(async () => {
    env = await timeSkippingEnv();
    await ensureSearchAttributes(env.connection, 'default');
    const config = loadConfig({ ...process.env, NODE_ENV: 'test', DATABASE_URL: await freshDatabase() });
    orm = await openOrm(config);
    await migrate(orm);
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
      activities: createActivities({ orm, processor: createProcessor(config), dispatcher: relayOnlyDispatcher }),
    });
    running = worker.run();
  }, 120_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await orm?.close();
    await env?.teardown();
  });

  it('keeps a cancelled subscription open for 90 days of late payment notices, then ends it, in seconds of real time', async () => {
    const id = randomUUID();
    const start: NewSubscription = {
      id, set: 'A', orgId: randomUUID(), offeringId: randomUUID(), securityClassId: randomUUID(), trancheId: null,
      investorId: 'investor-1', unitsSubscribed: 2, pricePerUnit: '10.00', totalAmount: '20.00', currency: 'USD',
      paymentMethod: null, accreditationStatus: null, suitabilityConfirmed: null, riskAcknowledgmentSigned: null,
      requestHash: null, createdAt: new Date().toISOString(),
    };
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
