import type { Knex } from '@mikro-orm/postgresql';
import { preparedStatement, runPrepared } from '../../db/prepared';
import { admission, PROBE_HOLD_MS, type CircuitState } from '../../domain/circuit-breaker';
import { PACING_HORIZON_MS, pace, spacingMs } from '../../domain/delivery-pacing';
import type { Target } from '../deliveries/attempt-store';
import type { EndpointPacer } from './endpoint-pacer';

/** How late past its reserved start an attempt may still take it: a durable timer fires up to a second late. */
const STALE_RESERVATION_MS = 2000;

/** `workflow` shape: an endpoint's default concurrency limit, and the most attempts one organisation holds at once. */
export interface WorkflowShapeLimits {
  defaultMaxInFlight: number;
  orgMaxInFlight: number;
}

/**
 * What the endpoint's circuit and rate limit allow one scheduled attempt. A throttled attempt of a
 * rate-limited endpoint has its start reserved; one held by a full endpoint (workflow shape) has none.
 * One sent to a rate-limited endpoint has its place in the process's pacing (`pacing`, webhooks/attempts/endpoint-pacer.ts).
 */
export type Gate = Send | { kind: 'held' } | { kind: 'throttled'; waitMs: number; reservedAt?: string; full?: true };
export type Send = {
  kind: 'send';
  delayMs: number;
  perSecond: number | null;
  pacing?: Promise<(endedAt: number) => void>;
};

/**
 * The endpoint's circuit breaker and rate limit, for one attempt: an open circuit holds a
 * scheduled attempt (it is recorded as a failed attempt, nothing sent) unless its probe is due,
 * which it then takes; a person's retry is never held. A rate limit reserves the attempt's start:
 * within the pacing horizon the attempt waits for it; further off, the attempt is throttled with
 * that start reserved for it, and its workflow sleeps on a durable timer until then and comes back
 * with the reservation, which needs no other (docs/decisions/0293-throttled-retries-sleep.md).
 */
export async function passGate(
  knex: Knex,
  t: Target,
  manual: boolean,
  reservedAt: string | undefined,
  pacer: EndpointPacer,
  workflowShape?: WorkflowShapeLimits,
): Promise<Gate> {
  const limits = manual ? undefined : workflowShape;
  // Most attempts write nothing here (a closed circuit, no rate limit, a free slot; or a held or
  // full endpoint): their row is read under its lock in one statement, with no transaction around
  // it, so they cost one round trip, not three. Only a rate limit's reservation and a probe write.
  // A rate-limited endpoint's attempt pays this read once more, in the transaction below.
  const first = await readFlow(knex, t, limits);
  if (!first) return SEND_NOW;
  const unlocked = await readOnlyGate(knex, first, t, manual, limits);
  if (unlocked) return unlocked;
  return knex.transaction(async (trx) => {
    // Under the flow row's lock until the write, so two attempts to one endpoint decide one after the other.
    const row = await readFlow(trx, t, limits);
    if (!row) return SEND_NOW;
    const early = await readOnlyGate(trx, row, t, manual, limits);
    if (early) return early;
    const word = wordFor(row, manual);
    const perSecond = row.rate_limit_per_second;
    // This worker's one-second rule: no start before a second after the POST `perSecond` places
    // before it ended (webhooks/attempts/endpoint-pacer.ts). While that one is still open, the start is a
    // second away at the soonest: an attempt without a reservation takes one from there; one that
    // came back to its reservation and finds it still open asks again after a second (or when an
    // attempt of the endpoint ends, in `workflow` shape), and then takes its turn afresh.
    const pacing = perSecond === null ? 0 : pacer.localPace(t.endpoint_id, perSecond).waitMs;
    if (pacing === Infinity && reservedAt !== undefined) return { kind: 'throttled', waitMs: 1000, full: true };
    const local = pacing === Infinity ? 1000 : pacing;
    let delayMs = 0;
    // Its start was reserved when it was throttled: at most a moment's wait for it, and no new one.
    // Woken late (a durable timer can fire a second late), it still goes as this worker's pacing
    // next allows, spaced from the start before it, so it never bunches with the next reservation
    // here. It takes its turn afresh when the one-second rule puts it past the horizon, or when it
    // is so late that its reservation is history (a worker down, a server backed up).
    const untilReserved = reservedAt === undefined ? 0 : Date.parse(reservedAt) - new Date(row.now).getTime();
    const reserved =
      perSecond !== null &&
      reservedAt !== undefined &&
      untilReserved >= -STALE_RESERVATION_MS &&
      local <= PACING_HORIZON_MS;
    if (reserved) delayMs = Math.min(PACING_HORIZON_MS, Math.max(0, untilReserved, local));
    else if (perSecond !== null) {
      const wait = Math.max(Number(row.rate_wait_ms), local);
      const paced = pace(wait, perSecond);
      if (paced.count === 0) {
        // Reserve the next free start for this attempt, once: its workflow sleeps until then.
        const waitMs = Math.ceil(wait);
        await trx('webhook_endpoint_flow')
          .where({ endpoint_id: t.endpoint_id })
          .update({ next_send_at: trx.raw(`now() + (? * interval '1 millisecond')`, [waitMs + spacingMs(perSecond)]) });
        // It wakes a pacing horizon early and waits the rest here, to the millisecond: a durable
        // timer's lateness (a workflow task, a local activity) never bunches two starts.
        return {
          kind: 'throttled',
          waitMs: Math.max(1, waitMs - PACING_HORIZON_MS),
          reservedAt: new Date(new Date(row.now).getTime() + waitMs).toISOString(),
        };
      }
      delayMs = paced.waitMs;
    }
    if (perSecond === null || reserved) {
      if (word === 'probe')
        await trx('webhook_endpoint_flow')
          .where({ endpoint_id: t.endpoint_id })
          .update({
            circuit_state: 'half_open',
            probe_at: trx.raw(`now() + (? * interval '1 millisecond')`, [PROBE_HOLD_MS]),
          });
      return { kind: 'send', delayMs, perSecond };
    }
    await trx('webhook_endpoint_flow')
      .where({ endpoint_id: t.endpoint_id })
      .update({
        ...(perSecond !== null && {
          next_send_at: trx.raw(`now() + (? * interval '1 millisecond')`, [delayMs + spacingMs(perSecond)]),
        }),
        ...(word === 'probe' && {
          circuit_state: 'half_open',
          probe_at: trx.raw(`now() + (? * interval '1 millisecond')`, [PROBE_HOLD_MS]),
        }),
      });
    return { kind: 'send', delayMs, perSecond };
  });
}

const SEND_NOW: Gate = Object.freeze({ kind: 'send', delayMs: 0, perSecond: null });

/**
 * The endpoint's flow row with its circuit, rate limit and pace (and, for `limits`, its load),
 * read under the row's lock: a writer's change waits to commit before this read sees the row.
 */
async function readFlow(
  knex: Knex,
  t: Target,
  limits: WorkflowShapeLimits | undefined,
): Promise<(FlowRow & Partial<LoadColumns>) | undefined> {
  const rows = limits
    ? await runPrepared(knex, READ_FLOW_AND_LOAD, [limits.defaultMaxInFlight, t.delivery_id, t.endpoint_id])
    : await runPrepared(knex, READ_FLOW, [t.endpoint_id]);
  return rows[0];
}

/**
 * What the circuit says to this attempt. A person's retry goes whatever it says: it is how an
 * integrator tells us the endpoint is back.
 */
const wordFor = (row: FlowRow, manual: boolean) =>
  manual
    ? 'send'
    : admission({ state: row.circuit_state, probeAt: row.probe_at && new Date(row.probe_at) }, new Date(row.now));

/**
 * The outcomes that write nothing: a circuit that holds the attempt, every slot taken, or no
 * rate limit and a closed circuit. Anything else (a rate limit's reservation, a probe) needs the
 * row locked until it is written, and answers undefined.
 */
async function readOnlyGate(
  knex: Knex,
  row: FlowRow & Partial<LoadColumns>,
  t: Target,
  manual: boolean,
  limits: WorkflowShapeLimits | undefined,
): Promise<Gate | undefined> {
  const word = wordFor(row, manual);
  if (word === 'hold') return { kind: 'held' };
  // Every slot is taken (the endpoint's, or its organisation's share of the worker's): wait about
  // as long as the backlog ahead needs, then ask again.
  if (limits && loaded(row) && isFull(row, limits))
    return { kind: 'throttled', waitMs: await backlogWait(knex, t.endpoint_id, row.slots), full: true };
  if (row.rate_limit_per_second === null && word === 'send') return SEND_NOW;
  return undefined;
}

/** The shortest and longest wait of a throttled attempt in `workflow` shape. */
const MIN_WAIT_MS = 100;
const MAX_WAIT_MS = 60_000;

/** A wait near `ms` (within the bounds), spread by a quarter either way so waiters do not come back together. */
const spread = (ms: number) =>
  Math.round(Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, ms)) * (0.75 + Math.random() * 0.5));

interface FlowRow {
  circuit_state: CircuitState;
  probe_at: Date | null;
  rate_limit_per_second: number | null;
  rate_wait_ms: number | null;
  now: Date;
}

/**
 * `workflow` shape: the endpoint's load, read with its flow row under the row's lock. Its limit, and
 * the attempts whose POST has not ended, this delivery's own claimed attempt aside: the endpoint's
 * and its organisation's across all its endpoints, counted in one scan of the open attempts.
 */
interface LoadColumns {
  slots: number;
  in_flight: number;
  org_in_flight: number;
}
const LOAD_COLUMNS = `, coalesce(e.max_in_flight, ?) as slots, o.in_flight, o.org_in_flight`;
const OPEN_ATTEMPTS = `cross join lateral (
    select (count(*) filter (where d.endpoint_id = f.endpoint_id))::int as in_flight, count(*)::int as org_in_flight
      from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
     where a.duration_ms is null and d.org_id = e.org_id and a.delivery_id <> ?) o`;

/** The flow row's read, each form prepared and planned once per connection (docs/decisions/0353-workflow-shape-statements-planned-once.md). */
const flowRead = (load: boolean) =>
  `select f.circuit_state, f.probe_at, e.rate_limit_per_second, now() as now,
          case when e.rate_limit_per_second is null then null
               else greatest(0, extract(epoch from coalesce(f.next_send_at, now()) - now()) * 1000) end
            as rate_wait_ms
          ${load ? LOAD_COLUMNS : ''}
     from webhook_endpoint_flow f join webhook_endpoints e on e.id = f.endpoint_id
          ${load ? OPEN_ATTEMPTS : ''}
    where f.endpoint_id = ? for update of f`;
const READ_FLOW = preparedStatement<FlowRow>('webhooks-read-flow', flowRead(false));
const READ_FLOW_AND_LOAD = preparedStatement<FlowRow & LoadColumns>('webhooks-read-flow-and-load', flowRead(true));

/** The row was read with the load's columns (`workflow` shape, an attempt no person asked for). */
const loaded = (row: FlowRow & Partial<LoadColumns>): row is FlowRow & LoadColumns => row.slots !== undefined;

/**
 * Every slot is taken: the endpoint's concurrency limit, or its organisation's share of the
 * worker's attempts. The organisation's count is read without a lock on its other endpoints: a
 * moment's overshoot by attempts deciding together is bounded by their number.
 */
const isFull = (row: LoadColumns, limits: WorkflowShapeLimits) =>
  row.in_flight >= row.slots || row.org_in_flight >= limits.orgMaxInFlight;

/**
 * How long a throttled attempt of a full endpoint waits: about as long as the backlog ahead needs,
 * from how many of the endpoint's deliveries wait for a first attempt and how long its recent
 * attempts took (one still in flight counts its age so far). Counted only when the endpoint is full,
 * so attempts to a busy endpoint with a free slot do not queue behind this count.
 */
async function backlogWait(knex: Knex, endpointId: string, slots: number): Promise<number> {
  const backlog: { waiting: number; mean_ms: number | null } = (
    await knex.raw(
      `select (select count(*) from (select 1 from webhook_deliveries d
                                      where d.endpoint_id = ? and d.status = 'pending' limit 10000) p)::int
                as waiting,
              (select avg(ms) from (
                 select a.duration_ms as ms
                   from (select d.id from webhook_deliveries d
                          where d.endpoint_id = ? and d.last_attempt_at is not null
                          order by d.last_attempt_at desc limit 20) r
                   join webhook_attempts a on a.delivery_id = r.id and a.duration_ms is not null
                 union all
                 select extract(epoch from now() - a.attempted_at) * 1000
                   from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
                  where a.duration_ms is null and d.endpoint_id = ? and a.attempted_at < now()) m)::float8
                as mean_ms`,
      [endpointId, endpointId, endpointId],
    )
  ).rows[0];
  const meanMs = Math.max(MIN_WAIT_MS, Number(backlog.mean_ms ?? MIN_WAIT_MS));
  return spread((backlog.waiting / slots) * meanMs);
}
