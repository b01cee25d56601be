import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { loadConfig } from '../../lib/runtime/config';
import { AppError } from '../../lib/errors';
import { migrate, openOrm, type Orm } from '../../db/orm';
import { createActivities } from '../../activities';
import { createDeliveryEngine } from '../../webhooks';
import { createProcessor } from '../../payments';
import { subscriptionWorkflowId, type NewSubscription, type SubscriptionState } from '../../domain/subscription';
import * as m from '../../domain/subscription-messages';
import type { subscriptionWorkflow } from '../../workflows/subscription';
import { ensureSearchAttributes } from '../../lib/runtime/temporal';
import { SEARCH_ATTRIBUTE_NAMES } from '../../domain/search-attributes';
import { subscriptionClient } from '../../api/issuance/subscription-client';
import { projectionOf } from '../../api/issuance/subscription-reads';
import { notificationIntake } from '../../api/payments/notification-intake';
import { freshDatabase } from '../support/service';
import { timeSkippingEnv } from '../support/time-skipping';
import { until } from '../support/wait';
import { newSubscription as newSubscriptionInput } from '../support/fixtures';

/** Durability: after the 90-day linger, and inputs that could wedge a workflow. */
describe('a subscription workflow after it closed, and poison inputs', () => {
  let env: TestWorkflowEnvironment;
  let orm: Orm;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = `ts-${randomUUID()}`;
  // Set when a test wants the next reference code taken by someone else first.
  const decoyFor = new Set<string>();

  beforeAll(async () => {
    env = await timeSkippingEnv();
    await ensureSearchAttributes(env.connection, 'default', SEARCH_ATTRIBUTE_NAMES);
    const config = loadConfig({ ...process.env, NODE_ENV: 'test', DATABASE_URL: await freshDatabase() });
    orm = await openOrm(config);
    await migrate(orm);
    const activities = createActivities({
      orm,
      processor: createProcessor(config),
      config,
      engine: createDeliveryEngine({ orm, config }),
    });
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
      maxCachedWorkflows: 0,
      activities: {
        ...activities,
        // Fault injected on an observed state: the moment a reference code is about to be
        // projected, another subscription takes it in the real table first.
        async recordTransition(state: SubscriptionState, events: Parameters<typeof activities.recordTransition>[1]) {
          if (state.referenceCode && decoyFor.delete(state.id)) await takeCode(state.referenceCode);
          return activities.recordTransition(state, events);
        },
      },
    });
    running = worker.run();
  }, 120_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await orm?.close();
    await env?.teardown();
  });

  async function takeCode(code: string): Promise<void> {
    const id = randomUUID();
    await orm.em.getConnection().execute(
      `insert into subscriptions (id, org_id, offering_id, investor_id, status, payment_status, reference_code, state, version, created_at, updated_at)
       values (?, ?, ?, 'someone-else', 'pending_review', 'pending', ?, '{}'::jsonb, 1, now(), now())`,
      [id, randomUUID(), randomUUID(), code],
    );
  }

  const newSubscription = (set: 'A' | 'B') => newSubscriptionInput({ set });
  const start = (s: NewSubscription) =>
    env.client.workflow.start<typeof subscriptionWorkflow>('subscriptionWorkflow', {
      workflowId: subscriptionWorkflowId(s.id),
      taskQueue,
      args: [{ start: s }],
    });
  const sign = { signature: 'A. Investor', signedAt: '2026-11-22T09:00:00Z', ipAddress: null };
  const client = () =>
    subscriptionClient(env.client, { TEMPORAL_TASK_QUEUE: taskQueue, COMMAND_TIMEOUT_MS: 60_000 }, projectionOf(orm));

  it('answers a command after the 90-day linger with 409 and the terminal status, not 404', async () => {
    const s = newSubscription('A');
    const handle = await start(s);
    await handle.executeUpdate(m.cancel);
    await env.sleep('91 days');
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    const err: unknown = await client()
      .command(s.id, m.signAgreement, sign)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ status: 409, code: 'SUBSCRIPTION_CLOSED', details: { status: 'cancelled' } });
  });

  it('records a refund that arrives after the workflow closed, with its event', async () => {
    const s = newSubscription('B');
    const handle = await start(s);
    await handle.executeUpdate(m.signAgreement, { args: [sign] });
    await handle.signal(m.paymentNotified, {
      kind: 'succeeded',
      processorEventId: `evt-${s.id}-paid`,
      reference: 'cs_1',
      amount: '20.00',
    });
    // Not in review in time: the approve below is refused and says so.
    await until(
      'pending_review',
      async () => (await handle.query(m.getSubscription)).status === 'pending_review',
    ).catch(() => undefined);
    await handle.executeUpdate(m.approve, { args: [{ actorId: 'staff-1' }] });
    await handle.executeUpdate(m.issueShares, { args: [{ actorId: 'staff-1' }] });
    await env.sleep('91 days');
    expect((await handle.describe()).status.name).toBe('COMPLETED');

    const take = notificationIntake(orm, client());
    const outcome = await take('sandbox', {
      id: `evt-${s.id}-refund`,
      type: 'payment.refunded',
      subscriptionId: s.id,
      notifications: [{ kind: 'refunded', processorEventId: `evt-${s.id}-refund`, reference: 'cs_1', amount: '20.00' }],
    });
    expect(outcome).toBe('signalled');
    const paymentStatus = async () =>
      ((await orm.em.getConnection().execute('select payment_status from subscriptions where id = ?', [s.id]))[0] ?? {})
        .payment_status as string | undefined;
    expect(await until('the refund projected', paymentStatus, (p) => p === 'refunded')).toBe('refunded');
    const events = (await orm.em
      .getConnection()
      .execute(`select type from events where data->>'subscription_id' = ? or data->>'id' = ?`, [s.id, s.id])) as {
      type: string;
    }[];
    expect(events.map((e) => e.type)).toContain('payment.refunded');
  });

  it('picks a new reference code when the one it drew is already taken', async () => {
    const s = newSubscription('A');
    const handle = await start(s);
    await handle.executeUpdate(m.signAgreement, { args: [sign] });
    decoyFor.add(s.id);
    const submitted = await Promise.race([
      handle.executeUpdate(m.submitForReview, { args: [{ paymentMethod: 'wire' }] }),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('submit-for-review wedged on a taken reference code')), 30_000),
      ),
    ]);
    expect(submitted.reference_code).toMatch(/^TRN-/);
    const rows = (await orm.em
      .getConnection()
      .execute('select id, reference_code from subscriptions where reference_code is not null')) as {
      id: string;
      reference_code: string;
    }[];
    expect(rows.find((r) => r.id === s.id)?.reference_code).toBe(submitted.reference_code);
    expect(new Set(rows.map((r) => r.reference_code)).size).toBe(rows.length);
  }, 60_000);
});
