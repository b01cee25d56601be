import type { Knex } from '@mikro-orm/postgresql';
import type { BehaviourSet } from '../../lib/behaviour-set';
import { logger } from '../../lib/runtime/logger';
import { recordSweep } from '../../lib/runtime/metrics';
import { LIVENESS_LOCK_CLASS } from './listener';
import { planStoredEvents } from '../events/publish';
import { IN_DOUBT_ERROR, type Recorder } from '../attempts/result-recorder';
import { notSent } from '../egress/sender';
import { ATTEMPT_DELAYS_MS } from '../../domain/retry-schedule';

const PAGE = 500;

export interface SweepDeps {
  knex: () => Knex;
  set: BehaviourSet;
  recorder: Recorder;
  /** Events stored this long ago and never planned are planned here. */
  graceMs: number;
  /** A dead dispatcher's attempt without a result is closed this long after it began. */
  stuckAfterMs: number;
}

/**
 * The safety net under the delivery engine (docs/decisions/0182-sweep.md), run by every worker on a timer; nothing on
 * the hot path waits for it. Each step takes rows that leave its set once handled, so a page is
 * never the same rows twice and nothing is starved behind rows that must wait:
 * - events in the outbox that were never planned (stored by hand, or before this engine);
 * - first attempts claimed by a dispatcher whose process died (its liveness lock is gone): closed
 *   as "in doubt" and handed to their retry schedule, since the endpoint may have received them;
 * - endpoints without a flow row (rate limit and circuit), which the dispatcher would never see.
 * Deliveries held by an ordered workflow belong to it and are never touched here.
 */
export async function sweep(deps: SweepDeps): Promise<{ planned: number; closed: number }> {
  const knex = deps.knex();
  await knex.raw(
    `insert into webhook_endpoint_flow (endpoint_id)
     select e.id from webhook_endpoints e where not exists (select 1 from webhook_endpoint_flow f where f.endpoint_id = e.id)
     on conflict do nothing`,
  );
  const stored = await knex('events')
    .whereNull('dispatched_at')
    .where('created_at', '<', knex.raw(`now() - (? * interval '1 millisecond')`, [deps.graceMs]))
    .orderBy('created_at')
    .limit(PAGE)
    .select('id', 'org_id', 'type', 'source', 'occurred_at', 'data');
  const planned = stored.length ? (await planStoredEvents(knex, deps.set, stored)).eventIds.length : 0;
  if (planned) logger.info({ count: planned }, 'sweep: planned events that were stored but never planned');

  const orphans: {
    delivery_id: string;
    number: number;
    owner: string;
    attempted_at: Date;
    endpoint_id: string;
    event_type: string;
    occurred_at: Date;
  }[] = (
    await knex.raw(
      `select a.delivery_id, a.number, a.owner, a.attempted_at, d.endpoint_id, d.event_type, ev.occurred_at
         from webhook_attempts a
         join webhook_deliveries d on d.id = a.delivery_id
         join events ev on ev.id = d.event_id
        where a.duration_ms is null and a.owner like 'dispatcher:%'
          and a.attempted_at < now() - (? * interval '1 millisecond')
          and not exists (select 1 from pg_locks l
                           where l.locktype = 'advisory' and l.classid = ?::oid and l.objsubid = 2
                             and l.objid = split_part(a.owner, ':', 2)::oid and l.granted)
        order by a.attempted_at
        limit ?`,
      [deps.stuckAfterMs, LIVENESS_LOCK_CLASS, PAGE],
    )
  ).rows;
  if (orphans.length) logger.warn({ count: orphans.length }, "sweep: closing a dead dispatcher's attempts as in doubt");
  await Promise.all(
    orphans.map((o) =>
      deps.recorder.record(
        notSent(
          {
            deliveryId: o.delivery_id,
            number: o.number,
            attemptedAt: new Date(o.attempted_at).toISOString(),
            nextDelayMs: ATTEMPT_DELAYS_MS[o.number] ?? null,
            owner: o.owner,
          },
          IN_DOUBT_ERROR,
        ),
        { endpointId: o.endpoint_id, handOver: { eventType: o.event_type } },
      ),
    ),
  );
  recordSweep();
  return { planned, closed: orphans.length };
}
