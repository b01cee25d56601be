import { PACING_HORIZON_MS, spacingMs } from '../../domain/delivery-pacing';

/** Rate-limited endpoints a process keeps pacing for at most; past it, it starts afresh. */
const MAX_ENDPOINTS = 10_000;

/**
 * One process's pacing of rate-limited endpoints (docs/decisions/0178-endpoint-rate-limit.md): a
 * start is never closer to the one before than the spacing, and never earlier than one second
 * after the POST `perSecond` places before it ended. That one arrived before it ended, so no second,
 * however the network or a busy event loop bunches arrivals, holds more than `perSecond` of them.
 * The dispatcher's first attempts and the attempt gate's (retries; every attempt in `workflow` shape)
 * share one pacer, so an endpoint's starts from one worker follow one rule
 * (docs/decisions/0339-one-second-rule-at-the-gate.md). Across workers the spacing is kept in
 * `webhook_endpoint_flow.next_send_at`; this rule is each worker's own.
 */
export interface EndpointPacer {
  /**
   * The wait until the endpoint's next start may go (Infinity while the POST it follows is still
   * open), and how many next starts may go within the pacing horizon.
   */
  localPace(endpointId: string, perSecond: number): { waitMs: number; ready: number };
  /**
   * Takes the endpoint's next start, not before `reservedAt` (epoch ms): waits for it, then answers
   * the function to call with the time its POST ended. Its place is taken when called, so callers
   * that decide in turn are paced in that order.
   */
  paced(endpointId: string, reservedAt: number, perSecond: number): Promise<(endedAt: number) => void>;
}

export function endpointPacer(): EndpointPacer {
  /** The actual start of the latest delivery to each endpoint, as a promise the next one waits on. */
  const lastStart = new Map<string, Promise<number>>();
  /** When each of the latest `perSecond` POSTs to each endpoint ended (null: not yet), in the order they started. */
  const recentEnds = new Map<string, { at: number | null; done: Promise<number> }[]>();

  return {
    localPace(endpointId, perSecond) {
      const ends = recentEnds.get(endpointId) ?? [];
      const now = Date.now();
      // The j-th next start follows the POST `perSecond` places before it: one of these, or none yet.
      const waitOf = (j: number) => {
        const before = ends[ends.length - perSecond + j];
        if (!before) return 0;
        return before.at === null ? Infinity : Math.max(0, before.at + 1000 - now);
      };
      let ready = 0;
      while (ready < perSecond && waitOf(ready) <= PACING_HORIZON_MS) ready++;
      return { waitMs: waitOf(0), ready };
    },

    async paced(endpointId, reservedAt, perSecond) {
      if (lastStart.size > MAX_ENDPOINTS) {
        lastStart.clear();
        recentEnds.clear();
      }
      const ends = recentEnds.get(endpointId) ?? [];
      const windowStart = ends.length >= perSecond ? ends[ends.length - perSecond]!.done : undefined;
      let ended!: (at: number) => void;
      const end = { at: null as number | null, done: new Promise<number>((resolve) => (ended = resolve)) };
      ends.push(end);
      recentEnds.set(endpointId, ends.slice(-perSecond));
      const previous = lastStart.get(endpointId) ?? Promise.resolve(0);
      let started!: (at: number) => void;
      lastStart.set(endpointId, new Promise<number>((resolve) => (started = resolve)));
      try {
        const at = Math.max(
          reservedAt,
          (await previous) + spacingMs(perSecond),
          windowStart ? (await windowStart) + 1000 : 0,
        );
        if (at > Date.now()) await new Promise((r) => setTimeout(r, at - Date.now()));
      } finally {
        started(Date.now());
      }
      return (at: number) => {
        end.at = at;
        ended(at);
      };
    },
  };
}
