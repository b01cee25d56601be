import type { Knex } from '@mikro-orm/postgresql';
import { admission, PROBE_HOLD_MS, type CircuitState } from '../domain/circuit-breaker';
import { pace } from '../domain/delivery-pacing';
import { allot, type Candidate, type Grant, type Mode } from './allotment';
import { preparedStatement, preparedTransaction } from '../db/prepared';
import { TARGET_COLUMNS, type Target } from './attempt-store';
import { unleased } from './leases';

const FIRST_ID = '00000000-0000-0000-0000-000000000000';

export interface RoundLimits {
  /** Slots this process may still fill. */
  budget: number;
  perEndpoint: number;
  /**
   * Endpoints looked at per round (WEBHOOK_DISPATCH_ENDPOINTS_PER_ROUND), shared out by
   * organisation: each organisation with queued deliveries sees at most its part of the window, and
   * more of its endpoints wait for the next round (its scan resumes after the last it saw).
   */
  endpointsPerRound: number;
  defaultMaxInFlight: number;
  /** Slots each organisation holds in this process already (webhooks/allotment.ts shares over them). */
  held?: ReadonlyMap<string, number>;
  /** The last slots of the process, kept for organisations holding fewer than this many. */
  reserve?: number;
  /**
   * This process's own pacing of a rate-limited endpoint (webhooks/endpoint-pacer.ts): a start follows
   * a second after the delivery `perSecond` places before it ended. `waitMs`: until the next start
   * may go (Infinity while the one it follows is still open); `ready`: how many next starts may go
   * within the pacing horizon. A round grants only those.
   */
  localPace?: (endpointId: string, perSecond: number) => { waitMs: number; ready: number };
}

/** Where a round's scan of the queue starts: after this organisation, and within each after its last endpoint seen. */
export interface Scan {
  orgAfter: string;
  endpointAfter: Map<string, string>;
}

export const freshScan = (): Scan => ({ orgAfter: FIRST_ID, endpointAfter: new Map() });

export interface Claimed {
  mode: Exclude<Mode, 'drop'>;
  target: Target;
  /** The attempt's start, as recorded (the database's clock). */
  attemptedAt: Date;
  /** How long after the round to send it: its reserved start under the endpoint's rate limit, else 0. */
  delayMs: number;
  /** Its endpoint's rate limit, deliveries a second (null: none); the dispatcher paces by it. */
  perSecond: number | null;
  /** Its endpoint's concurrency limit. */
  maxInFlight: number;
}

export interface RoundResult {
  claimed: Claimed[];
  /** Deliveries taken off the queue because their endpoint was disabled or deleted meanwhile. */
  dropped: string[];
  /** Endpoints that got all they were granted: more may be queued behind. */
  granted: Map<string, Grant>;
  /** Whether the scan stopped short of some organisation's queued endpoints (the next round goes on from there). */
  cut: boolean;
  /** Milliseconds until a rate-limited endpoint with queued deliveries may start one again, if any. */
  paceWaitMs: number | null;
}

interface CandidateRow {
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

/**
 * One dispatch round's database work, in one transaction (docs/decisions/0175-dispatch-round.md):
 * find the endpoints with queued deliveries (a loose index scan: one probe per
 * endpoint, whatever the backlog), lock each one's flow row (SKIP LOCKED, so two workers' rounds
 * take different endpoints and neither waits), count what is in flight to it from every worker,
 * share out the round (webhooks/allotment.ts), and take the granted deliveries off the queue,
 * claiming attempt 1 of each for `owner` in the same statement, at its reserved start. The rate
 * limit's next free start and a probe's hold are written before the transaction ends, so the
 * limits hold across workers. Two round trips: the candidates with the `begin`, the take with the
 * `commit` (db/prepared.ts).
 */
export async function claimRound(
  knex: Knex,
  owner: string,
  scan: Scan,
  limits: RoundLimits,
  /** Deliveries whose first attempt's POST has ended in this process but whose result is not yet recorded. */
  ended: ReadonlySet<string> = new Set(),
): Promise<RoundResult> {
  return preparedTransaction(knex, async (trx) => {
    const rows = await trx.run(CANDIDATES, [
      scan.orgAfter,
      limits.endpointsPerRound,
      limits.endpointsPerRound,
      JSON.stringify([...scan.endpointAfter].map(([org_id, after]) => ({ org_id, after }))),
      [...ended],
      limits.endpointsPerRound,
    ]);
    const cut = advance(scan, rows);
    if (rows.length === 0) return { claimed: [], dropped: [], granted: new Map(), cut, paceWaitMs: null };

    const now = new Date(rows[0]!.now);
    const candidates: Candidate[] = rows.map((r) => ({
      endpointId: r.endpoint_id,
      orgId: r.org_id,
      live: r.live,
      admission: admission({ state: r.circuit_state, probeAt: r.probe_at && new Date(r.probe_at) }, now),
      free: (r.max_in_flight ?? limits.defaultMaxInFlight) - r.in_flight,
      rate:
        r.rate_limit_per_second === null
          ? null
          : {
              perSecond: r.rate_limit_per_second,
              ...paceOf(r, r.rate_limit_per_second, limits),
            },
    }));
    const grants = allot(candidates, {
      budget: limits.budget,
      perEndpoint: limits.perEndpoint,
      held: limits.held,
      reserve: limits.reserve,
    });
    const paceWaitMs = nextPaceWait(candidates);
    if (grants.length === 0) return { claimed: [], dropped: [], granted: new Map(), cut, paceWaitMs };

    // Rate-limited endpoints reserve the starts they were granted (a round that takes fewer
    // reserves more than it uses: the limit only ever errs towards sending later); a probe holds
    // the circuit half open.
    const flow = grants
      .filter((g) => g.mode === 'probe' || g.spacingMs > 0)
      .map((g) => ({
        endpoint_id: g.endpointId,
        next_send_ms: g.spacingMs > 0 ? g.startMs + g.take * g.spacingMs : null,
        probe: g.mode === 'probe',
      }));
    const taken = await trx.runAndCommit(TAKE, [
      JSON.stringify(
        grants.map((g) => ({
          endpoint_id: g.endpointId,
          take: g.take,
          mode: g.mode,
          start_ms: g.startMs,
          spacing_ms: g.spacingMs,
        })),
      ),
      owner,
      PROBE_HOLD_MS,
      JSON.stringify(flow),
      flow.map((f) => f.endpoint_id),
    ]);

    const perSecond = new Map(candidates.map((c) => [c.endpointId, c.rate?.perSecond ?? null]));
    const maxInFlight = new Map(rows.map((r) => [r.endpoint_id, r.max_in_flight ?? limits.defaultMaxInFlight]));
    const claimed: Claimed[] = [];
    const dropped: string[] = [];
    const counts = new Map<string, number>();
    for (const t of taken) {
      counts.set(t.endpoint_id, (counts.get(t.endpoint_id) ?? 0) + 1);
      if (t.mode === 'drop') dropped.push(t.delivery_id);
      // No attempt claimed: attempt 1 is already someone's (a manual retry came first).
      else if (t.attempted_at !== null)
        claimed.push({
          mode: t.mode,
          target: t,
          attemptedAt: new Date(t.attempted_at),
          delayMs: Number(t.delay_ms),
          perSecond: perSecond.get(t.endpoint_id) ?? null,
          maxInFlight: maxInFlight.get(t.endpoint_id) ?? limits.defaultMaxInFlight,
        });
    }
    const granted = new Map(grants.filter((g) => counts.get(g.endpointId) === g.take).map((g) => [g.endpointId, g]));
    return { claimed, dropped, granted, cut, paceWaitMs };
  });
}

/**
 * A rate-limited endpoint's next free start, the later of its spacing across workers and this
 * process's pacing, and how many may start within the horizon: no more than this process's pacing
 * lets go, nor than its limit less its attempts not yet ended from every worker (the pacing never
 * has more open at once), so nothing a round claims waits for its pace longer than the horizon.
 */
function paceOf(r: CandidateRow, perSecond: number, limits: RoundLimits): { waitMs: number; startable: number } {
  const local = limits.localPace?.(r.endpoint_id, perSecond) ?? { waitMs: 0, ready: Infinity };
  return {
    waitMs: Math.max(Number(r.rate_wait_ms), local.waitMs),
    startable: Math.max(0, Math.min(perSecond - r.in_flight, local.ready)),
  };
}

/**
 * Moves the scan on past what this round saw: an organisation cut short resumes after its last
 * endpoint seen, one seen to its end starts again from its first; the organisations likewise.
 * Answers whether anything was cut short.
 */
function advance(scan: Scan, rows: readonly CandidateRow[]): boolean {
  const last = new Map<string, { endpoint: string; more: boolean }>();
  for (const r of rows) {
    const seen = last.get(r.org_id);
    if (!seen || r.endpoint_id > seen.endpoint) last.set(r.org_id, { endpoint: r.endpoint_id, more: r.org_more });
  }
  if (scan.endpointAfter.size > 10_000) scan.endpointAfter.clear();
  let cut = false;
  for (const [org, { endpoint, more }] of last) {
    if (more) scan.endpointAfter.set(org, endpoint);
    else scan.endpointAfter.delete(org);
    cut ||= more;
  }
  const orgsMore = rows.some((r) => r.orgs_more);
  scan.orgAfter = orgsMore ? rows[0]!.last_org : FIRST_ID;
  return cut || orgsMore;
}

/** The soonest a rate-limited endpoint that may start nothing this round may start one. */
function nextPaceWait(candidates: readonly Candidate[]): number | null {
  let wait: number | null = null;
  for (const c of candidates) {
    // Waiting on an attempt still open: the end of its POST wakes the dispatcher.
    if (!c.live || c.admission === 'hold' || c.rate === null || !Number.isFinite(c.rate.waitMs)) continue;
    const paced = pace(c.rate.waitMs, c.rate.perSecond);
    if (paced.count > 0) continue;
    wait = wait === null ? paced.waitMs : Math.min(wait, paced.waitMs);
  }
  return wait === null ? null : Math.ceil(wait);
}

/** The round's endpoints: queued, found by a loose index scan, their flow rows locked, their attempts in flight counted. */
const CANDIDATES = preparedStatement<CandidateRow>(
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
const TAKE = preparedStatement<Target & { mode: Mode; attempted_at: Date | null; delay_ms: number }>(
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
