import { pace, spacingMs } from '../domain/delivery-pacing';

/**
 * How one dispatch round shares out what may be sent (issue 19): each endpoint at most its free
 * concurrency slots and what its rate limit lets it start within the pacing horizon, and the process's free slots fairly across
 * organisations first, then across each organisation's endpoints (max-min fair: nobody gets more
 * while someone who wants more gets less). A burst from one organisation takes only its share.
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
  /** The endpoint's rate limit, with the wait until its next free start; null when it sets none. */
  rate: { perSecond: number; waitMs: number } | null;
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
      const paced = c.rate === null ? Infinity : pace(c.rate.waitMs, c.rate.perSecond).count;
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
  for (const [org, share] of fairShares(orgDemand, limits.budget)) {
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

/** Max-min fair division of `total` among demands (whole units; the remainder goes first come). */
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
