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
} from '../domain/webhook-messages';
import { logger } from '../lib/runtime/logger';

/** Deliveries per signal: history events stay small (about 200 bytes an item). */
const MAX_ITEMS = 1000;

export interface HandOverDeps {
  knex: () => Knex;
  temporal: Client;
  taskQueue: string;
  shards: number;
  /** Starts may ask for eager dispatch to this process's worker (webhooks/engine.ts, `EngineRun`). */
  eagerStarts?: boolean;
}

/**
 * Hands failed first attempts to a retry scheduler (workflows/retry-scheduler.ts), which starts
 * each one's delivery workflow: the §6.5 schedule from attempt 2 on durable timers. The rows are
 * written with the failure (webhooks/result-recorder.ts) and deleted here once the signal is in
 * Temporal's history, so a crash or a Temporal outage in between only delays the schedule. The
 * signal is idempotent: a delivery workflow already started is not started again.
 * Answers how many were handed over.
 */
export async function handOverRetries(deps: HandOverDeps, olderThanMs = 0): Promise<number> {
  return deps.knex().transaction(async (trx) => {
    const rows: { delivery_id: string; endpoint_id: string; event_type: string; first_delay_ms: string | null }[] =
      await trx('webhook_schedule_handovers')
        .where('created_at', '<=', trx.raw(`now() - (? * interval '1 millisecond')`, [olderThanMs]))
        .orderBy('created_at')
        .limit(MAX_ITEMS)
        .forUpdate()
        .skipLocked()
        .select('*');
    if (rows.length === 0) return 0;
    const items: RetryItem[] = rows.map((r) => ({
      deliveryId: r.delivery_id,
      endpointId: r.endpoint_id,
      eventType: r.event_type,
      ...(r.first_delay_ms !== null && { firstDelayMs: Number(r.first_delay_ms) }),
    }));
    const shard = shardOf(rows[0]!.delivery_id, deps.shards);
    await deps.temporal.workflow.signalWithStart(RETRY_SCHEDULER_WORKFLOW, {
      taskQueue: deps.taskQueue,
      workflowId: retrySchedulerWorkflowId(deps.taskQueue, shard),
      args: [{ shard }],
      signal: scheduleRetries,
      signalArgs: [{ items }],
    });
    await trx('webhook_schedule_handovers')
      .whereIn(
        'delivery_id',
        rows.map((r) => r.delivery_id),
      )
      .delete();
    return rows.length;
  });
}

/**
 * Hands queued deliveries of endpoints that keep per-subscription order
 * (docs/decisions/0181-ordered-endpoints-queue.md) to each subscription's ordered workflow, which sends them
 * one at a time in outbox order. A group whose signal fails stays queued for the next call.
 */
export async function handOverOrdered(deps: Omit<HandOverDeps, 'shards'>): Promise<number> {
  return deps.knex().transaction(async (trx) => {
    const rows: { delivery_id: string; endpoint_id: string; ordered_key: string; event_seq: string }[] = await trx(
      'webhook_queue',
    )
      .whereNotNull('ordered_key')
      .orderBy('seq')
      .limit(MAX_ITEMS)
      .forUpdate()
      .skipLocked()
      .select('delivery_id', 'endpoint_id', 'ordered_key', 'event_seq');
    if (rows.length === 0) return 0;
    const groups = new Map<string, typeof rows>();
    for (const r of rows) {
      const id = orderedWorkflowId(r.endpoint_id, r.ordered_key);
      groups.set(id, [...(groups.get(id) ?? []), r]);
    }
    const handed: string[] = [];
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
        }
      }),
    );
    if (handed.length) await trx('webhook_queue').whereIn('delivery_id', handed).delete();
    return handed.length;
  });
}

/** Spreads signals over the shards; which shard takes a delivery does not matter (children are keyed by delivery). */
function shardOf(id: string, shards: number): number {
  return parseInt(id.slice(0, 8), 16) % shards;
}
