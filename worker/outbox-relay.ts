import type { Orm } from '../db/orm';
import type { EventDispatcher } from '../activities/event-dispatcher';
import { logger } from '../lib/logger';

export interface OutboxRelay {
  stop(): Promise<void>;
}

const BATCH = 500;

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

  async function sweep(): Promise<void> {
    for (;;) {
      const ids: string[] = await knex('events')
        .whereNull('dispatched_at')
        .where('created_at', '<', knex.raw(`now() - (? * interval '1 millisecond')`, [deps.graceMs]))
        .orderBy('created_at')
        .limit(BATCH)
        .pluck('id');
      if (ids.length) {
        logger.info({ count: ids.length }, 'outbox relay: dispatching events left undispatched');
        await deps.dispatcher.dispatch(ids);
      }
      // A full batch may have more behind it, unless dispatch made no progress (Temporal down).
      if (ids.length < BATCH || stopped) return;
      const still = await knex('events').whereIn('id', ids).whereNull('dispatched_at').count<{ n: string }[]>({ n: '*' });
      if (Number(still[0]?.n) === ids.length) return;
    }
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
