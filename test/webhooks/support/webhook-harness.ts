import { policyFromConfig } from '../../../lib/ssrf-guard';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { loadConfig, type Config } from '../../../lib/config';
import { migrate, openOrm, type Orm } from '../../../db/orm';
import { createFanoutActivities } from '../../../activities/event-fanout';
import { createAttemptActivities } from '../../../activities/webhook-attempt';
import { secretBoxFrom } from '../../../activities/webhook-secret-box';
import { relayOnlyDispatcher, temporalDispatcher } from '../../../activities/event-dispatcher';
import { publishEvents } from '../../../activities/event-publisher';
import { endpointStore } from '../../../api/notifications/endpoint-store';
import { deliveryReads } from '../../../api/notifications/delivery-reads';
import { uuidFromName } from '../../../lib/ids';
import { deliveryWorkflowId, fanoutWorkflowId } from '../../../workflows/webhook-messages';
import type { webhookDeliveryWorkflow } from '../../../workflows/webhook-delivery';
import { freshDatabase } from '../../support/service';
import type { Receiver } from './receiver';

/**
 * The webhook half of the service without the HTTP API, for tests that bring their own Temporal
 * (the time-skipping server, or a worker in another process): a fresh database, the real
 * activities, the real store and publish path.
 */
export async function webhookHarness(): Promise<{ config: Config; orm: Orm }> {
  const config = loadConfig({ ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_URL: await freshDatabase(), WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' });
  const orm = await openOrm(config);
  await migrate(orm);
  return { config, orm };
}

/** Only the activities the webhook workflows call. */
export const webhookActivities = (config: Config, orm: Orm) => ({
  ...createFanoutActivities({ orm, config: () => config }),
  ...createAttemptActivities({ orm, secrets: () => secretBoxFrom(config), ssrf: () => policyFromConfig(config) }),
});

export function webhookOps(deps: { config: Config; orm: Orm; client: Client; taskQueue: string; receiver: Receiver }) {
  const store = endpointStore(deps.orm, secretBoxFrom(deps.config));
  const reads = deliveryReads(deps.orm);
  const dispatcher = temporalDispatcher(deps.client, deps.taskQueue);
  const orgId = randomUUID();
  const knex = () => deps.orm.em.getConnection().getKnex();
  return {
    orgId,
    store,
    reads,
    async endpoint(hook: string, plan: { responses?: number[]; defaultStatus?: number } = {}) {
      const { row, secret } = await store.create(orgId, { url: deps.receiver.url(hook), description: hook, eventTypes: ['*'] });
      await deps.receiver.plan(hook, { ...plan, secret });
      return row;
    },
    /**
     * Publishes one event aimed at the endpoint and returns its delivery workflow once started. `viaFanout: false` runs
     * the fan-out's own activity and starts the delivery as a top-level workflow: the Java
     * time-skipping server stops skipping time once a child outlives its parent's close.
     */
    async publish(endpointId: string, opts: { viaFanout: boolean } = { viaFanout: true }) {
      const event = { id: randomUUID(), type: 'subscription.approved', source: 'service.issuance', orgId, occurredAt: new Date().toISOString(), data: { id: randomUUID() } };
      const deliveryId = uuidFromName(event.id, endpointId);
      if (opts.viaFanout) {
        await publishEvents({ orm: deps.orm, dispatcher }, [event], [{ eventId: event.id, endpointId }]);
        await deps.client.workflow.getHandle(fanoutWorkflowId(event.id)).result();
      } else {
        await publishEvents({ orm: deps.orm, dispatcher: relayOnlyDispatcher }, [event], [{ eventId: event.id, endpointId }]);
        expect(await webhookActivities(deps.config, deps.orm).planFanout(event.id)).toMatchObject({ deliveryIds: [deliveryId] });
        await deps.client.workflow.start<typeof webhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
          taskQueue: deps.taskQueue,
          workflowId: deliveryWorkflowId(deliveryId),
          args: [{ deliveryId }],
        });
      }
      return { deliveryId, handle: deps.client.workflow.getHandle<typeof webhookDeliveryWorkflow>(deliveryWorkflowId(deliveryId)) };
    },
    attempts: (deliveryId: string) => reads.attempts(deliveryId),
    delivery: (deliveryId: string) => reads.get(orgId, deliveryId),
    /** Waits (in real time, the clock locked) until the delivery has this many attempts. */
    async attemptsReach(deliveryId: string, n: number, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const rows = await reads.attempts(deliveryId);
        if (rows.length >= n) return rows;
        if (Date.now() > deadline) throw new Error(`delivery ${deliveryId}: ${rows.length} of ${n} attempts`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    knex,
  };
}

/** Milliseconds between consecutive attempts. */
export const gaps = (attempts: { attempted_at: Date }[]) =>
  attempts.slice(1).map((a, i) => new Date(a.attempted_at).getTime() - new Date(attempts[i]!.attempted_at).getTime());
