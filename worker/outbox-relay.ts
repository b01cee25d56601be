import type { Orm } from '../db/orm';
import type { EventDispatcher } from '../activities/event-dispatcher';
import { logger } from '../lib/logger';

export interface OutboxRelay {
  stop(): Promise<void>;
}

const BATCH = 500;
/**
 * An event the relay handed over is not handed over again for this long: under a backlog its
 * plan may still be running, and re-sending it would only add load.
 */
const REDISPATCH_AFTER_MS = 30_000;

/**
 * Re-dispatches events still undispatched a grace period after they were stored (the publisher
 * died between commit and dispatch, or the hand-over failed), and hands deliveries still `pending`
 * with no attempt long after they were recorded to a batcher again (a batcher run lost to an
 * operator's terminate, or deliveries recorded by an older engine). Every worker runs one; both are
 * idempotent (deliveries by id, attempts by number and owner), so several relays only repeat no-ops.
 */
export function startOutboxRelay(deps: {
  orm: Orm;
  dispatcher: EventDispatcher;
  graceMs: number;
  intervalMs: number;
  stuckAfterMs: number;
}): OutboxRelay {
  const knex = deps.orm.em.getConnection().getKnex();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const handedOver = new Map<string, number>();

  async function sweepEvents(): Promise<void> {
    const now = Date.now();
    for (const [id, at] of handedOver) if (at < now - REDISPATCH_AFTER_MS) handedOver.delete(id);
    const ids: string[] = await knex('events')
      .whereNull('dispatched_at')
      .where('created_at', '<', knex.raw(`now() - (? * interval '1 millisecond')`, [deps.graceMs]))
      .orderBy('created_at')
      .limit(Math.min(BATCH + handedOver.size, 10 * BATCH))
      .pluck('id');
    const due = ids.filter((id) => !handedOver.has(id)).slice(0, BATCH);
    if (due.length === 0) return;
    logger.info({ count: due.length }, 'outbox relay: dispatching events left undispatched');
    await deps.dispatcher.dispatch(due);
    for (const id of due) handedOver.set(id, now);
  }

  async function sweepStuck(): Promise<void> {
    if (!deps.dispatcher.handOver) return;
    const rows: { id: string; event_id: string }[] = await knex('webhook_deliveries')
      .where({ status: 'pending', attempt_count: 0 })
      .where('created_at', '<', knex.raw(`now() - (? * interval '1 millisecond')`, [deps.stuckAfterMs]))
      .whereNotExists(knex('webhook_attempts').whereRaw('webhook_attempts.delivery_id = webhook_deliveries.id'))
      .orderBy('created_at')
      .limit(BATCH)
      .select('id', 'event_id');
    const fresh = rows.filter((r) => !handedOver.has(r.id));
    if (fresh.length === 0) return;
    logger.warn({ count: fresh.length }, 'outbox relay: handing stuck pending deliveries to a batcher again');
    const byEvent = new Map<string, string[]>();
    for (const r of fresh) byEvent.set(r.event_id, [...(byEvent.get(r.event_id) ?? []), r.id]);
    await deps.dispatcher.handOver([...byEvent].map(([eventId, deliveryIds]) => ({ eventId, deliveryIds })));
    const now = Date.now();
    for (const r of fresh) handedOver.set(r.id, now);
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweepEvents()
        .then(sweepStuck)
        .catch((err) => logger.warn({ err }, 'outbox relay sweep failed; retrying next interval'))
        .finally(schedule);
    }, deps.intervalMs);
  }
  schedule();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
