/**
 * The two statements of a dispatch round (webhooks/dispatch/claim.ts): the candidates with the `begin`, the
 * take with the `commit`, each planned once per connection (db/prepared.ts).
 */
import type { CircuitState } from '../../domain/circuit-breaker';
import { preparedStatement } from '../../db/prepared';
import type { Mode } from './allotment';
import { TARGET_COLUMNS, type Target } from '../deliveries/attempt-store';
import { unleased } from '../deliveries/leases';

/** One endpoint a round may grant to, with its limits and what is in flight to it from every worker. */
export interface CandidateRow {
  endpoint_id: string;
  org_id: string;
  /** Its organisation has more endpoints with queued deliveries than this round's part of the window. */
  org_more: boolean;
  /** More organisations have queued deliveries than the window has endpoints; the last one seen. */
  orgs_more: boolean;
  last_org: string;
  live: boolean;
  max_in_flight: number | null;
  rate_limit_per_second: number | null;
  rate_wait_ms: number | null;
  circuit_state: CircuitState;
  probe_at: Date | null;
  in_flight: number;
  now: Date;
}

/** The round's endpoints: queued, found by a loose index scan, their flow rows locked, their attempts in flight counted. */
export const CANDIDATES = preparedStatement<CandidateRow>(
  'webhooks-claim-candidates',
  `with recursive orgs as (
           (select org_id from webhook_queue where ordered_key is null and org_id > ?::uuid order by org_id limit 1)
           union all
           select (select q.org_id from webhook_queue q
                    where q.ordered_key is null and q.org_id > orgs.org_id order by q.org_id limit 1)
             from orgs where orgs.org_id is not null),
         found_orgs as (select org_id from orgs where org_id is not null limit ?),
         -- Each organisation's part of the window: one organisation's endpoints never fill it.
         quota as (select greatest(1, ?::int / greatest(1, count(*)))::int as k,
                          max(org_id::text)::uuid as last_org, count(*) as n from found_orgs),
         cursors as (select * from jsonb_to_recordset(?::jsonb) as c(org_id uuid, after uuid)),
         -- Each organisation's endpoints with queued deliveries, after its last seen (or from its first
         -- again): a loose index scan, one probe per endpoint, whatever the backlog; one more than its
         -- part tells whether it has more.
         eps as (
           select o.org_id, coalesce(
                    (select q.endpoint_id from webhook_queue q
                      where q.ordered_key is null and q.org_id = o.org_id and q.endpoint_id > c.after
                      order by q.endpoint_id limit 1),
                    (select q.endpoint_id from webhook_queue q
                      where q.ordered_key is null and q.org_id = o.org_id
                      order by q.endpoint_id limit 1)) as endpoint_id, 1 as n
             from found_orgs o left join cursors c on c.org_id = o.org_id
           union all
           select e.org_id, (select q.endpoint_id from webhook_queue q
                              where q.ordered_key is null and q.org_id = e.org_id and q.endpoint_id > e.endpoint_id
                              order by q.endpoint_id limit 1), e.n + 1
             from eps e where e.endpoint_id is not null and e.n <= (select k from quota)),
         found as (select e.endpoint_id, e.org_id,
                          exists (select 1 from eps m where m.org_id = e.org_id and m.n > (select k from quota)
                                                        and m.endpoint_id is not null) as org_more
                     from eps e where e.endpoint_id is not null and e.n <= (select k from quota)),
         -- An attempt holds its endpoint's slot until its POST ends, not until its result is recorded.
         open_attempts as (
           select d.endpoint_id, count(*)::int as n from webhook_deliveries d
            where d.id = any(array(select a.delivery_id from webhook_attempts a
                                    where a.duration_ms is null and a.delivery_id <> all(?::uuid[])))
            group by d.endpoint_id)
         select f.endpoint_id, e.org_id, found.org_more, (select n >= ? from quota) as orgs_more,
                (select last_org from quota) as last_org, (e.status = 'enabled' and e.deleted_at is null) as live,
                e.max_in_flight, e.rate_limit_per_second, f.circuit_state, f.probe_at, now() as now,
                coalesce(o.n, 0) as in_flight,
                case when e.rate_limit_per_second is null then null
                     else greatest(0, extract(epoch from coalesce(f.next_send_at, now()) - now()) * 1000) end
                  as rate_wait_ms
           from found join webhook_endpoint_flow f on f.endpoint_id = found.endpoint_id
           join webhook_endpoints e on e.id = f.endpoint_id
           left join open_attempts o on o.endpoint_id = f.endpoint_id
          order by f.endpoint_id
            for update of f skip locked`,
);

/** The granted deliveries off the queue, each one's attempt 1 claimed at its reserved start, the flow rows updated. */
export const TAKE = preparedStatement<Target & { mode: Mode; attempted_at: Date | null; delay_ms: number }>(
  'webhooks-claim-take',
  `with grants as (select * from jsonb_to_recordset(?::jsonb)
                           as g(endpoint_id uuid, take int, mode text, start_ms float8, spacing_ms float8)),
              picked as (
                select q.delivery_id, g.mode,
                       g.start_ms + g.spacing_ms * (row_number() over (partition by g.endpoint_id order by q.seq) - 1)
                         as delay_ms
                  from grants g
                 cross join lateral (
                  select q.delivery_id, q.seq from webhook_queue q
                   where q.endpoint_id = g.endpoint_id and q.ordered_key is null and ${unleased('q')}
                   order by q.seq limit g.take for update skip locked) q),
              dequeued as (delete from webhook_queue q where q.delivery_id = any(array(select delivery_id from picked))
                           returning q.delivery_id),
              claimed as (insert into webhook_attempts (delivery_id, number, attempted_at, owner)
                          select p.delivery_id, 1, now() + (p.delay_ms * interval '1 millisecond'), ?
                            from picked p join dequeued using (delivery_id)
                           where p.mode <> 'drop'
                          on conflict (delivery_id, number) do nothing
                          returning delivery_id, attempted_at),
              flow as (update webhook_endpoint_flow f
                          set next_send_at = coalesce(now() + (v.next_send_ms * interval '1 millisecond'), f.next_send_at),
                              circuit_state = case when v.probe then 'half_open' else f.circuit_state end,
                              probe_at = case when v.probe then now() + (? * interval '1 millisecond') else f.probe_at end
                         from jsonb_to_recordset(?::jsonb) as v(endpoint_id uuid, next_send_ms float8, probe boolean)
                        where f.endpoint_id = v.endpoint_id and f.endpoint_id = any(?::uuid[]))
         select p.mode, p.delay_ms, c.attempted_at, ${TARGET_COLUMNS}
           from picked p join dequeued using (delivery_id)
           left join claimed c using (delivery_id)
           join webhook_deliveries d on d.id = p.delivery_id
           join webhook_endpoints e on e.id = d.endpoint_id
           join webhook_event_bodies b on b.event_id = d.event_id
           join events ev on ev.id = d.event_id
          where d.id = any(array(select delivery_id from picked))`,
);
