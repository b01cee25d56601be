import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { loadConfig, type Config } from '../../../lib/runtime/config';
import { migrate, openOrm, type Orm } from '../../../db/orm';
import { createAttemptActivities } from '../../../activities/webhook-attempt';
import { createDeliveryEngine, deliveryReads, endpointStore, secretBoxFrom } from '../../../webhooks';
import { deliveryIdFor } from './delivery-id';
import { deliveryWorkflowId } from '../../../domain/webhook-messages';
import type { webhookDeliveryWorkflow } from '../../../workflows/webhook-delivery';
import { freshDatabase } from '../../support/service';
import type { PlannedAnswer, Receiver } from './receiver';
import { publish, publishUnqueued } from './publish';
import { until } from '../../support/wait';

/**
 * The webhook half of the service without the HTTP API, for tests that bring their own Temporal
 * (the time-skipping server, or a worker in another process): a fresh database, the real
 * activities, the real store and publish path.
 */
export async function webhookHarness(env: Record<string, string> = {}): Promise<{ config: Config; orm: Orm }> {
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: await freshDatabase(),
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
    ...env,
  });
  const orm = await openOrm(config);
  await migrate(orm);
  return { config, orm };
}

/** Only the activities the webhook workflows call, on an engine of their own (no dispatcher). */
export const webhookActivities = (config: Config, orm: Orm) => ({
  ...createAttemptActivities(createDeliveryEngine({ orm, config })),
});

export function webhookOps(deps: { config: Config; orm: Orm; client: Client; taskQueue: string; receiver: Receiver }) {
  const store = endpointStore(deps.orm, secretBoxFrom(deps.config));
  const reads = deliveryReads(deps.orm);
  const orgId = randomUUID();
  const knex = () => deps.orm.em.getConnection().getKnex();
  const secrets = new Map<string, string>();
  return {
    orgId,
    store,
    reads,
    async endpoint(
      hook: string,
      plan: { responses?: PlannedAnswer[]; defaultStatus?: PlannedAnswer; delayMs?: number } = {},
    ) {
      const { row, secret } = await store.create(orgId, {
        url: deps.receiver.url(hook),
        description: hook,
        eventTypes: ['*'],
      });
      secrets.set(hook, secret);
      await deps.receiver.plan(hook, { ...plan, secret });
      return row;
    },
    /** Changes how the receiver answers the hook from now on. */
    replan: (hook: string, plan: { responses?: PlannedAnswer[]; defaultStatus?: PlannedAnswer; delayMs?: number }) =>
      deps.receiver.plan(hook, { ...plan, secret: secrets.get(hook)! }),
    /**
     * Publishes one event aimed at the endpoint. `viaDispatcher: true` queues it for a worker's
     * dispatcher (which makes attempt 1; a delivery workflow exists only if that failed);
     * `viaDispatcher: false` records the delivery off the queue and starts its delivery workflow
     * from attempt 1 as a top-level workflow: the Java time-skipping server stops skipping time once
     * a child outlives its parent's close, and the retry scheduler never closes.
     */
    async publish(endpointId: string, opts: { viaDispatcher: boolean } = { viaDispatcher: true }) {
      const event = {
        id: randomUUID(),
        type: 'subscription.approved',
        source: 'service.issuance',
        orgId,
        occurredAt: new Date().toISOString(),
        data: { id: randomUUID() },
      };
      const deliveryId = deliveryIdFor(event.id, endpointId);
      const targets = [{ eventId: event.id, endpointId }];
      if (opts.viaDispatcher) {
        await publish(deps, [event], targets);
      } else {
        expect((await publishUnqueued(deps, [event], targets)).deliveries).toEqual([
          { eventId: event.id, endpointId, deliveryId },
        ]);
        await deps.client.workflow.start<typeof webhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
          taskQueue: deps.taskQueue,
          workflowId: deliveryWorkflowId(deliveryId),
          args: [{ deliveryId }],
        });
      }
      return {
        deliveryId,
        eventId: event.id,
        handle: deps.client.workflow.getHandle<typeof webhookDeliveryWorkflow>(deliveryWorkflowId(deliveryId)),
      };
    },
    attempts: (deliveryId: string) => reads.attempts(deliveryId),
    delivery: (deliveryId: string) => reads.get(orgId, deliveryId),
    /** Waits (in real time, the clock locked) until the delivery has this many attempts with their result recorded. */
    async attemptsReach(deliveryId: string, n: number, timeoutMs = 30_000) {
      const recorded = async () => (await reads.attempts(deliveryId)).filter((a) => a.duration_ms !== null);
      return until(`delivery ${deliveryId}: ${n} attempts recorded`, recorded, (rows) => rows.length >= n, {
        timeoutMs,
      });
    },
    knex,
  };
}

/** Milliseconds between consecutive attempts. */
export const gaps = (attempts: { attempted_at: Date }[]) =>
  attempts.slice(1).map((a, i) => new Date(a.attempted_at).getTime() - new Date(attempts[i]!.attempted_at).getTime());

/** True while the workflow holds a durable timer that has neither fired nor been cancelled. */
export async function timerPending(handle: {
  fetchHistory(): Promise<{
    events?:
      | {
          eventType?: unknown;
          timerStartedEventAttributes?: unknown;
          timerFiredEventAttributes?: { startedEventId?: unknown } | null;
          timerCanceledEventAttributes?: { startedEventId?: unknown } | null;
          eventId?: unknown;
        }[]
      | null;
  }>;
}): Promise<boolean> {
  const events = (await handle.fetchHistory()).events ?? [];
  const started = new Set(events.filter((e) => e.timerStartedEventAttributes).map((e) => String(e.eventId)));
  for (const e of events) {
    const ended = e.timerFiredEventAttributes?.startedEventId ?? e.timerCanceledEventAttributes?.startedEventId;
    if (ended !== undefined) started.delete(String(ended));
  }
  return started.size > 0;
}
