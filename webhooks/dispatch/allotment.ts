import { pace, spacingMs } from '../../domain/delivery-pacing';

/**
 * How one dispatch round shares out what may be sent (docs/decisions/0175-dispatch-round.md): each endpoint
 * at most its free concurrency slots and what its rate limit lets it start within the pacing horizon, and the
 * process's free slots fairly across organisations first, then across each organisation's endpoints (max-min
 * fair: nobody gets more while someone who wants more gets less). A burst from one organisation takes only
 * its share. Fair over the slots each organisation already holds, not only the round's free ones, and the
 * last few slots (the reserve) go only to an organisation holding fewer than that many: one tenant's slow
 * POSTs never take the last slot another needs (docs/decisions/0309-slots-taken-at-the-post.md).
 */

export interface Candidate {
  endpointId: string;
  orgId: string;
  /** Enabled and not deleted; otherwise its queued deliveries are dropped from the queue. */
  live: boolean;
  /** The circuit breaker's word (domain/circuit-breaker.ts). */
  admission: 'send' | 'probe' | 'hold';
  /** The endpoint's concurrency limit less the attempts in flight to it, from every worker. */
  free: number;
  /**
   * The endpoint's rate limit, with the wait until its next free start, and how many of its
   * deliveries may start within the pacing horizon as far as its open attempts go (webhooks/dispatch/claim.ts);
   * null when it sets none.
   */
  rate: { perSecond: number; waitMs: number; startable?: number } | null;
}

/** send: POST; probe: POST one to test an open circuit; defer: straight onto the retry schedule; drop: nothing more. */
export type Mode = 'send' | 'probe' | 'defer' | 'drop';

export interface Grant {
  endpointId: string;
  mode: Mode;
  take: number;
  /** Rate-limited endpoints: the first one starts this long from now, each next one `spacingMs` later. */
  startMs: number;
  spacingMs: number;
}

export interface AllotmentLimits {
  /** Slots this process may still fill (its in-flight limit less its POSTs in flight). */
  budget: number;
  /** At most this many deliveries of one endpoint per round. */
  perEndpoint: number;
  /** Slots each organisation holds in this process already (POSTs under way, and deliveries about to start). */
  held?: ReadonlyMap<string, number>;
  /** The last slots of the process, given only to an organisation that holds fewer than this many. */
  reserve?: number;
}

export function allot(candidates: readonly Candidate[], limits: AllotmentLimits): Grant[] {
  const grants: Grant[] = [];
  const demand = new Map<string, number>();
  const now = (endpointId: string, mode: Mode, take: number): Grant => ({
    endpointId,
    mode,
    take,
    startMs: 0,
    spacingMs: 0,
  });
  for (const c of candidates) {
    if (!c.live) grants.push(now(c.endpointId, 'drop', limits.perEndpoint));
    else if (c.admission === 'hold') grants.push(now(c.endpointId, 'defer', limits.perEndpoint));
    else {
      const cap = c.admission === 'probe' ? 1 : limits.perEndpoint;
      const paced =
        c.rate === null
          ? Infinity
          : Math.min(pace(c.rate.waitMs, c.rate.perSecond).count, c.rate.startable ?? Infinity);
      const wants = Math.min(cap, c.free, paced);
      if (wants > 0) demand.set(c.endpointId, wants);
    }
  }
  const byId = new Map(candidates.map((c) => [c.endpointId, c]));
  const byOrg = new Map<string, Candidate[]>();
  for (const c of candidates) if (demand.has(c.endpointId)) byOrg.set(c.orgId, [...(byOrg.get(c.orgId) ?? []), c]);
  const orgDemand = new Map(
    [...byOrg].map(([org, cs]) => [org, cs.reduce((n, c) => n + demand.get(c.endpointId)!, 0)]),
  );
  for (const [org, share] of sharesOverHeld(orgDemand, limits.held ?? new Map(), limits.budget, limits.reserve ?? 0)) {
    const endpoints = new Map(byOrg.get(org)!.map((c) => [c.endpointId, demand.get(c.endpointId)!]));
    for (const [endpointId, take] of fairShares(endpoints, share)) {
      if (take <= 0) continue;
      const c = byId.get(endpointId)!;
      const grant = now(endpointId, c.admission === 'probe' ? 'probe' : 'send', take);
      if (c.rate) Object.assign(grant, { startMs: Math.max(0, c.rate.waitMs), spacingMs: spacingMs(c.rate.perSecond) });
      grants.push(grant);
    }
  }
  return grants;
}

/**
 * The round's free slots by organisation, max-min fair over what each holds already (its level
 * starts at what it holds: one holding more than its share gets nothing new until the others
 * catch up). The last `reserve` free slots go only to organisations holding fewer than `reserve`,
 * and only until they hold that many.
 * @internal exported for its tests
 */
export function sharesOverHeld(
  demands: ReadonlyMap<string, number>,
  held: ReadonlyMap<string, number>,
  budget: number,
  reserve: number,
): Map<string, number> {
  const free = Math.max(0, Math.floor(budget));
  const open = Math.max(0, free - reserve);
  const given = fillLevels(demands, held, open);
  // The reserve: only up to `reserve` slots held in all, so an organisation holding many never takes it.
  const levels = new Map([...demands.keys()].map((k) => [k, (held.get(k) ?? 0) + given.get(k)!]));
  const light = new Map(
    [...demands]
      .map(([k, d]): [string, number] => [k, Math.min(d - given.get(k)!, reserve - levels.get(k)!)])
      .filter(([, more]) => more > 0),
  );
  for (const [k, more] of fillLevels(light, levels, free - open)) given.set(k, given.get(k)! + more);
  return given;
}

/** Water-filling: `total` units, each to whoever wanting more stands lowest (level `from` plus what it got). */
function fillLevels(
  demands: ReadonlyMap<string, number>,
  from: ReadonlyMap<string, number>,
  total: number,
): Map<string, number> {
  const given = new Map([...demands.keys()].map((k) => [k, 0]));
  const level = (k: string) => (from.get(k) ?? 0) + given.get(k)!;
  let left = total;
  let open = [...demands.keys()].filter((k) => demands.get(k)! > 0);
  while (left > 0 && open.length > 0) {
    open.sort((a, b) => level(a) - level(b));
    const low = level(open[0]!);
    // Everyone at the lowest level rises together, to the next level up (or as far as the slots go).
    const tied = open.filter((k) => level(k) === low);
    const next = tied.length < open.length ? level(open[tied.length]!) : Infinity;
    const room = Math.min(...tied.map((k) => demands.get(k)! - given.get(k)!));
    const step = Math.max(1, Math.min(next - low, room, Math.floor(left / tied.length)));
    for (const k of tied) {
      if (left === 0) break;
      const give = Math.min(step, demands.get(k)! - given.get(k)!, left);
      given.set(k, given.get(k)! + give);
      left -= give;
    }
    open = open.filter((k) => given.get(k)! < demands.get(k)!);
  }
  return given;
}

/**
 * Max-min fair division of `total` among demands (whole units; the remainder goes first come).
 * @internal exported for its tests
 */
export function fairShares(demands: ReadonlyMap<string, number>, total: number): Map<string, number> {
  const given = new Map([...demands.keys()].map((k) => [k, 0]));
  let left = Math.max(0, Math.floor(total));
  let open = [...demands.keys()].filter((k) => demands.get(k)! > 0);
  while (left > 0 && open.length > 0) {
    const each = Math.max(1, Math.floor(left / open.length));
    for (const k of open) {
      if (left === 0) break;
      const give = Math.min(each, demands.get(k)! - given.get(k)!, left);
      given.set(k, given.get(k)! + give);
      left -= give;
    }
    open = open.filter((k) => given.get(k)! < demands.get(k)!);
  }
  return given;
}
