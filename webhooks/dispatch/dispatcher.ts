import type { Knex } from '@mikro-orm/postgresql';
import { type AttemptInput } from '../../domain/webhook-messages';
import { logger } from '../../lib/runtime/logger';
import { stopWaiting } from '../deliveries/attempt-store';
import { claimRound, freshScan, type Claimed, type RoundLimits } from './claim';
import { reserveOf } from '../../domain/attempt-slots';
import type { Recorder } from '../attempts/result-recorder';
import { CIRCUIT_OPEN, notSent, type Sender } from '../egress/sender';
import { ATTEMPT_DELAYS_MS } from '../../domain/retry-schedule';
import type { EndpointPacer } from '../attempts/endpoint-pacer';
import { hopNow, type HopLog } from '../../lib/runtime/hop-log';

export interface DispatcherSettings extends Omit<RoundLimits, 'budget' | 'held' | 'reserve' | 'localPace'> {
  /** POSTs this process keeps in flight at most, across every endpoint. */
  maxInFlight: number;
}

export interface Dispatcher {
  /** Something may be queued: run a round now (or right after the one running). */
  wake(): void;
  /** Stops taking deliveries and waits for the POSTs in flight and their records. */
  stop(): Promise<void>;
  /** Waits for the rounds running or asked for (the warm-up waits for the first, worker/warm-up.ts). */
  settled(): Promise<void>;
  /** POSTs under way: each holds a slot. */
  readonly inFlight: number;
  /** Claimed deliveries waiting for their pace (at most the pacing horizon, and a second after one ended): none holds a slot. */
  readonly parked: number;
}

/**
 * First attempts (docs/decisions/0173-dispatcher-engine-shape.md): rounds of claims from the queue
 * (webhooks/dispatch/claim.ts), each granted delivery POSTed on its own the moment it is claimed and recorded the
 * moment it ends (webhooks/attempts/result-recorder.ts), so a slow endpoint holds up nothing but its own slots. A round runs
 * when a publishing transaction commits (the listener's notification), when a POST to an endpoint that had
 * more queued ends, and when a rate-limited endpoint's next start comes within reach; one round runs at a
 * time and a wake during it runs another right after. No round waits on a poll interval; the sweep's timer is
 * only the safety net for a lost notification.
 */
export function createDispatcher(deps: {
  knex: () => Knex;
  owner: () => string;
  sender: Sender;
  recorder: Recorder;
  settings: DispatcherSettings;
  /** The process's pacing of rate-limited endpoints, shared with the attempt gate (webhooks/attempts/endpoint-pacer.ts). */
  pacer: EndpointPacer;
  /** The benchmark's per-hop timestamps (lib/runtime/hop-log.ts); absent or off, nothing is timed. */
  hops?: HopLog;
}): Dispatcher {
  const { settings } = deps;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  /** POSTs under way: a slot is taken when the POST starts, never while a delivery waits for its pace. */
  let inFlight = 0;
  /** Claimed, waiting for their pace: they take a slot in a moment, so a round leaves room for them. */
  let parked = 0;
  /** Each organisation's POSTs under way and parked deliveries: a round is fair over them. */
  const orgHeld = new Map<string, number>();
  /** The last slots, given only to an organisation holding fewer than this many (webhooks/dispatch/allotment.ts). */
  const reserve = reserveOf(settings.maxInFlight);
  const scan = freshScan();
  let paceTimer: NodeJS.Timeout | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let failures = 0;
  /** Endpoints that got all they were granted: when enough of their POSTs end, more may be taken. */
  const maybeMore = new Set<string>();
  /** Each endpoint's first attempts in flight from this process. */
  const endpointInFlight = new Map<string, number>();
  /** First attempts whose POST has ended and whose result is still being recorded: their slots are free. */
  const ended = new Set<string>();
  const sends = new Set<Promise<void>>();
  function wake(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = loop().finally(() => {
      running = null;
      if (again) wake();
    });
  }

  async function loop(): Promise<void> {
    do {
      again = false;
      try {
        if (await round()) again = true;
        failures = 0;
      } catch (err) {
        // The database is unreachable or refused: try again shortly; publishes commit nothing meanwhile.
        failures++;
        logger.warn({ err, failures }, 'dispatch round failed; retrying');
        clearTimeout(retryTimer);
        retryTimer = setTimeout(wake, Math.min(30_000, 500 * 2 ** Math.min(failures, 6)));
        return;
      }
    } while (again && !stopped);
  }

  /** Answers whether another round should follow at once (the round was cut short by its limits). */
  async function round(): Promise<boolean> {
    // Parked deliveries hold no slot, but they start within the pacing horizon: the round leaves them room.
    const budget = settings.maxInFlight - inFlight - parked;
    if (budget <= 0) return false;
    const claimStart = deps.hops?.on ? hopNow() : 0;
    const result = await claimRound(
      deps.knex(),
      deps.owner(),
      scan,
      { ...settings, budget, held: orgHeld, reserve, localPace: deps.pacer.localPace },
      ended,
    );
    const claim = claimStart ? { cs: claimStart, ce: hopNow() } : undefined;
    for (const id of result.granted.keys()) maybeMore.add(id);
    if (result.dropped.length) await stopWaiting(deps.knex(), result.dropped);
    for (const c of result.claimed) start(c, claim);
    if (result.paceWaitMs !== null) {
      clearTimeout(paceTimer);
      paceTimer = setTimeout(wake, result.paceWaitMs);
    }
    const budgetSpent = result.claimed.filter((c) => c.mode !== 'defer').length >= budget;
    const deferredFull = [...result.granted.values()].some((g) => g.mode === 'defer' || g.mode === 'drop');
    return budgetSpent || result.cut || deferredFull;
  }

  function start(c: Claimed, claim?: { cs: number; ce: number }): void {
    const t = c.target;
    const input: AttemptInput = {
      deliveryId: t.delivery_id,
      number: 1,
      attemptedAt: c.attemptedAt.toISOString(),
      nextDelayMs: ATTEMPT_DELAYS_MS[1],
      owner: deps.owner(),
    };
    const opts = { endpointId: t.endpoint_id, publishedAt: t.occurred_at, handOver: { eventType: t.event_type } };
    if (c.mode === 'defer') {
      // Held by the endpoint's open circuit: straight onto its retry schedule, nothing sent.
      void deps.recorder.record(notSent(input, CIRCUIT_OPEN), opts);
      return;
    }
    const orgId = t.org_id;
    parked++;
    orgHeld.set(orgId, (orgHeld.get(orgId) ?? 0) + 1);
    let posting = false;
    const p = (async () => {
      let finished;
      let timing: Record<string, string | number> | undefined;
      let postEnded: ((at: number) => void) | undefined;
      try {
        // A rate-limited endpoint's delivery waits for its reserved start (at most the pacing horizon),
        // and for its turn in the endpoint's second (paced), however late the ones before it ran.
        if (c.perSecond !== null)
          postEnded = await deps.pacer.paced(t.endpoint_id, Date.now() + c.delayMs, c.perSecond);
        // Its slot is taken now, as its POST starts (docs/decisions/0309-slots-taken-at-the-post.md).
        parked--;
        inFlight++;
        posting = true;
        endpointInFlight.set(t.endpoint_id, (endpointInFlight.get(t.endpoint_id) ?? 0) + 1);
        const ps = claim ? hopNow() : 0;
        finished = await deps.sender.send(t, input);
        if (claim) timing = { d: t.delivery_id, ...claim, ps, pe: hopNow() };
      } finally {
        postEnded?.(Date.now());
        // The POST has ended: its slot is free now, while its result is recorded.
        let left = endpointInFlight.get(t.endpoint_id) ?? 0;
        if (posting) {
          inFlight--;
          left--;
          if (left === 0) endpointInFlight.delete(t.endpoint_id);
          else endpointInFlight.set(t.endpoint_id, left);
        } else parked--;
        const held = orgHeld.get(orgId)! - 1;
        if (held === 0) orgHeld.delete(orgId);
        else orgHeld.set(orgId, held);
        ended.add(t.delivery_id);
        // A rate-limited endpoint's next start follows this end: its limit is what may be open at once.
        const limit = c.perSecond === null ? c.maxInFlight : Math.min(c.maxInFlight, c.perSecond);
        if ((maybeMore.has(t.endpoint_id) || c.perSecond !== null) && worthARound(limit - left, limit)) {
          maybeMore.delete(t.endpoint_id);
          wake();
        } else if (inFlight + parked === settings.maxInFlight - 1) wake();
      }
      try {
        await deps.recorder.record(finished, opts);
        if (timing) deps.hops!.mark({ ...timing, re: hopNow() });
      } finally {
        ended.delete(t.delivery_id);
      }
    })()
      .catch((err: unknown) => logger.error({ err, deliveryId: t.delivery_id }, 'attempt failed unexpectedly'))
      .finally(() => sends.delete(p));
    sends.add(p);
  }

  return {
    wake,
    get inFlight() {
      return inFlight;
    },
    get parked() {
      return parked;
    },
    async settled() {
      while (running) await running;
    },
    async stop() {
      stopped = true;
      clearTimeout(paceTimer);
      clearTimeout(retryTimer);
      while (running) await running;
      await Promise.all([...sends]);
      await deps.recorder.drain();
    },
  };
}

/**
 * Whether the slots an endpoint with queued deliveries has free are worth a claim round: a quarter
 * of its concurrency limit (at least one). A round is two round trips, so a busy endpoint is
 * topped up in batches rather than one delivery per round; at idle nothing waits, since a publish
 * wakes the dispatcher itself (docs/decisions/0175-dispatch-round.md).
 */
function worthARound(free: number, limit: number): boolean {
  return free >= Math.max(1, Math.floor(limit / 4));
}
