import type { Knex } from '@mikro-orm/postgresql';
import { admission, PROBE_HOLD_MS } from '../../domain/circuit-breaker';
import { pace } from '../../domain/delivery-pacing';
import { allot, type Candidate, type Grant, type Mode } from './allotment';
import { preparedTransaction } from '../../db/prepared';
import type { Target } from '../deliveries/attempt-store';
import { CANDIDATES, TAKE, type CandidateRow } from './claim-statements';

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
  /** Slots each organisation holds in this process already (webhooks/dispatch/allotment.ts shares over them). */
  held?: ReadonlyMap<string, number>;
  /** The last slots of the process, kept for organisations holding fewer than this many. */
  reserve?: number;
  /**
   * This process's own pacing of a rate-limited endpoint (webhooks/attempts/endpoint-pacer.ts): a start follows
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

/**
 * One dispatch round's database work, in one transaction (docs/decisions/0175-dispatch-round.md):
 * find the endpoints with queued deliveries (a loose index scan: one probe per
 * endpoint, whatever the backlog), lock each one's flow row (SKIP LOCKED, so two workers' rounds
 * take different endpoints and neither waits), count what is in flight to it from every worker,
 * share out the round (webhooks/dispatch/allotment.ts), and take the granted deliveries off the queue,
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
