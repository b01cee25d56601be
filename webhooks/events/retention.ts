import type { Knex } from '@mikro-orm/postgresql';
import type { PruneStatement } from '../../domain/retention-messages';

/**
 * The engine's retention: every rule of what of its tables is pruned lives here (activities/retention.ts
 * lists it beside the other concerns). One statement, oldest first by `seq`: of the next `limit`
 * events, those stored more than `seconds` ago and already planned lose their finished
 * deliveries (success, exhausted, failed with no attempt to come, or pending for an endpoint that
 * is disabled or deleted) untouched for as long, with their attempts; an event goes, with its §6.3
 * body and ping target, once no delivery of it is left. A delivery that waits for its turn or a
 * retry, has an attempt in flight, sits in the queue or a hand-over, or is locked by a writer
 * stays, and so does its event. Rows are locked only for
 * this statement, at most `limit` deliveries (each with its few attempts) and `limit` events.
 */
export async function pruneEventBatch(
  knex: Knex,
  opts: { seconds: number; afterSeq: string; limit: number },
): Promise<PruneStatement> {
  const result = await knex.raw(
    `with scan as (
       select e.id, e.seq, e.created_at < now() - make_interval(secs => ?) as expired, e.dispatched_at is not null as planned
         from events e
        where e.seq > ?::bigint
        order by e.seq
        limit ?
     ),
     old as (select id from scan where expired and planned),
     finished as (
       select d.id
         from webhook_deliveries d
        where d.event_id in (select id from old)
          and (d.status in ('success', 'exhausted') or (d.status = 'failed' and d.next_attempt_at is null)
               -- Never attempted and nothing will: its endpoint is disabled or deleted (docs/decisions/0290-nothing-left-pending.md).
               or (d.status = 'pending' and exists (select 1 from webhook_endpoints e where e.id = d.endpoint_id
                                                      and (e.status <> 'enabled' or e.deleted_at is not null))))
          and d.updated_at < now() - make_interval(secs => ?)
          and not exists (select 1 from webhook_attempts a where a.delivery_id = d.id and a.duration_ms is null)
          and not exists (select 1 from webhook_queue q where q.delivery_id = d.id)
          and not exists (select 1 from webhook_schedule_handovers h where h.delivery_id = d.id)
        order by d.created_at
        limit ?
        for update of d skip locked
     ),
     gone_attempts as (delete from webhook_attempts a where a.delivery_id in (select id from finished) returning 1),
     gone_deliveries as (delete from webhook_deliveries d where d.id in (select id from finished) returning 1),
     emptied as (
       select o.id from old o
        where not exists (select 1 from webhook_deliveries d where d.event_id = o.id and d.id not in (select id from finished))
     ),
     gone_bodies as (delete from webhook_event_bodies b where b.event_id in (select id from emptied)),
     gone_targets as (delete from webhook_event_targets t where t.event_id in (select id from emptied)),
     gone_events as (delete from events e where e.id in (select id from emptied) returning 1)
     select (select count(*) from gone_events)::int as events,
            (select count(*) from gone_deliveries)::int as deliveries,
            (select count(*) from gone_attempts)::int as attempts,
            (select count(*) from finished)::int as picked,
            (select count(*) from scan)::int as scanned,
            (select max(seq) from scan)::text as last_seq,
            coalesce((select bool_and(expired) from scan), true) as all_expired`,
    [opts.seconds, opts.afterSeq, opts.limit, opts.seconds, opts.limit],
  );
  const row = (result as { rows: Record<string, unknown>[] }).rows[0]!;
  const picked = Number(row.picked);
  const scanned = Number(row.scanned);
  // Deliveries of these events may be left past the limit: the next statement looks at the same events.
  const full = picked >= opts.limit;
  return {
    deleted: {
      events: Number(row.events),
      webhook_deliveries: Number(row.deliveries),
      webhook_attempts: Number(row.attempts),
    },
    // The last event `seq` looked at: the next statement starts after it. Done: nothing older than
    // the window is left after it (kept rows aside).
    afterSeq: full || row.last_seq === null ? opts.afterSeq : String(row.last_seq),
    done: !full && (scanned < opts.limit || row.all_expired !== true),
  };
}
