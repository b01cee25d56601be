import type { Orm } from '../db/orm';
import type { EventDispatcher } from '../activities/event-dispatcher';
import { logger } from '../lib/logger';

export interface OutboxRelay {
  stop(): Promise<void>;
}

const BATCH = 500;
/**
 * An event the relay handed over is not handed over again for this long: under a backlog its
 * fan-out may be started but not yet run, and re-starting it would only add load to the server.
 */
const REDISPATCH_AFTER_MS = 30_000;

/**
 * Re-dispatches events still undispatched a grace period after they were stored: the ones whose
 * publisher died between commit and dispatch, or whose dispatch failed. Every worker runs one;
 * dispatching is idempotent by event id, so several relays only repeat no-ops.
 */
export function startOutboxRelay(deps: { orm: Orm; dispatcher: EventDispatcher; graceMs: number; intervalMs: number }): OutboxRelay {
  const knex = deps.orm.em.getConnection().getKnex();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const handedOver = new Map<string, number>();

  async function sweep(): Promise<void> {
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

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweep()
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
