import type { Client } from '@temporalio/client';
import type { Knex } from '@mikro-orm/postgresql';
import {
  deliverInOrder,
  ORDERED_DELIVERY_WORKFLOW,
  orderedWorkflowId,
  RETRY_SCHEDULER_WORKFLOW,
  retrySchedulerWorkflowId,
  scheduleRetries,
  type RetryItem,
} from '../../domain/webhook-messages';
import { logger } from '../../lib/runtime/logger';
import { endLeases, LEASE_MS, unleased } from '../deliveries/leases';

/** Deliveries per signal: history events stay small (about 200 bytes an item). */
const MAX_ITEMS = 1000;

export interface HandOverDeps {
  knex: () => Knex;
  temporal: Client;
  taskQueue: string;
  shards: number;
  /** Starts may ask for eager dispatch to this process's worker (webhooks/dispatch/engine.ts, `EngineRun`). */
  eagerStarts?: boolean | (() => boolean);
}

/**
 * Hands failed first attempts to a retry scheduler (workflows/retry-scheduler.ts), which starts
 * each one's delivery workflow: the §6.5 schedule from attempt 2 on durable timers. The rows are
 * written with the failure (webhooks/attempts/result-recorder.ts), leased while the signal goes
 * (webhooks/deliveries/leases.ts) and deleted once it is in Temporal's history, so a crash or a Temporal
 * outage in between only delays the schedule. The signal is idempotent: a delivery workflow
 * already started is not started again. Answers how many were handed over.
 */
export async function handOverRetries(deps: HandOverDeps, olderThanMs = 0): Promise<number> {
  const rows: { delivery_id: string; endpoint_id: string; event_type: string; first_delay_ms: string | null }[] = (
    await deps.knex().raw(
      `update webhook_schedule_handovers h set leased_until = now() + (? * interval '1 millisecond')
        where h.delivery_id = any(array(
                select o.delivery_id from webhook_schedule_handovers o
                 where o.created_at <= now() - (? * interval '1 millisecond') and ${unleased('o')}
                 order by o.created_at limit ? for update skip locked))
        returning h.delivery_id, h.endpoint_id, h.event_type, h.first_delay_ms`,
      [LEASE_MS, olderThanMs, MAX_ITEMS],
    )
  ).rows;
  if (rows.length === 0) return 0;
  const ids = rows.map((r) => r.delivery_id);
  const items: RetryItem[] = rows.map((r) => ({
    deliveryId: r.delivery_id,
    endpointId: r.endpoint_id,
    eventType: r.event_type,
    ...(r.first_delay_ms !== null && { firstDelayMs: Number(r.first_delay_ms) }),
  }));
  const shard = shardOf(rows[0]!.delivery_id, deps.shards);
  try {
    await deps.temporal.workflow.signalWithStart(RETRY_SCHEDULER_WORKFLOW, {
      taskQueue: deps.taskQueue,
      workflowId: retrySchedulerWorkflowId(deps.taskQueue, shard),
      args: [{ shard }],
      signal: scheduleRetries,
      signalArgs: [{ items }],
    });
  } catch (err) {
    await endLeases(deps.knex(), 'webhook_schedule_handovers', [], ids);
    throw err;
  }
  await endLeases(deps.knex(), 'webhook_schedule_handovers', ids);
  return rows.length;
}

/**
 * Hands queued deliveries of endpoints that keep per-subscription order
 * (docs/decisions/0181-ordered-endpoints-queue.md) to each subscription's ordered workflow, which sends them
 * one at a time in outbox order. A group whose signal fails stays queued for the next call. The
 * rows are leased while the signals go (webhooks/deliveries/leases.ts); no call takes a row of a group another
 * call holds, and the leasing statements of all workers take turns, so a group's rows are always
 * handed over in order.
 */
export async function handOverOrdered(deps: Omit<HandOverDeps, 'shards'>): Promise<number> {
  const rows: { delivery_id: string; endpoint_id: string; ordered_key: string; event_seq: string }[] = await deps
    .knex()
    .transaction(async (trx) => {
      // Its snapshot is taken after the lock, so it sees every lease another worker's statement made.
      await trx.raw(`select pg_advisory_xact_lock(hashtext('webhook_queue.ordered_handover'))`);
      return (
        await trx.raw(
          `with held as (select distinct endpoint_id, ordered_key from webhook_queue
                          where ordered_key is not null and leased_until >= now()),
                picked as (
                  select q.delivery_id from webhook_queue q
                   where q.ordered_key is not null and ${unleased('q')}
                     and not exists (select 1 from held h
                                      where h.endpoint_id = q.endpoint_id and h.ordered_key = q.ordered_key)
                   order by q.seq limit ? for update skip locked)
           update webhook_queue q set leased_until = now() + (? * interval '1 millisecond')
             from picked p where q.delivery_id = p.delivery_id
           returning q.delivery_id, q.endpoint_id, q.ordered_key, q.event_seq, q.seq`,
          [MAX_ITEMS, LEASE_MS],
        )
      ).rows.sort((x: { seq: string }, y: { seq: string }) => Number(x.seq) - Number(y.seq));
    });
  if (rows.length === 0) return 0;
  const groups = new Map<string, typeof rows>();
  for (const r of rows) {
    const id = orderedWorkflowId(r.endpoint_id, r.ordered_key);
    groups.set(id, [...(groups.get(id) ?? []), r]);
  }
  const handed: string[] = [];
  const kept: string[] = [];
  await Promise.all(
    [...groups].map(async ([workflowId, items]) => {
      try {
        await deps.temporal.workflow.signalWithStart(ORDERED_DELIVERY_WORKFLOW, {
          taskQueue: deps.taskQueue,
          workflowId,
          args: [{ endpointId: items[0]!.endpoint_id, subscriptionId: items[0]!.ordered_key }],
          signal: deliverInOrder,
          signalArgs: [{ items: items.map((i) => ({ deliveryId: i.delivery_id, seq: Number(i.event_seq) })) }],
        });
        handed.push(...items.map((i) => i.delivery_id));
      } catch (err) {
        logger.warn({ err, workflowId, count: items.length }, 'ordered hand-over failed; it stays queued');
        kept.push(...items.map((i) => i.delivery_id));
      }
    }),
  );
  await endLeases(deps.knex(), 'webhook_queue', handed, kept);
  return handed.length;
}

/** Spreads signals over the shards; which shard takes a delivery does not matter (children are keyed by delivery). */
function shardOf(id: string, shards: number): number {
  return parseInt(id.slice(0, 8), 16) % shards;
}
