import type { Arrival } from './sink';
import { summary } from './stats';

export interface PacedRun {
  /** Each event's publish start (ms since epoch). */
  published: Map<string, number>;
  /** How long each publish took to be answered (the API's answer, or the commit). */
  answerMs: number[];
  failures: number;
}

/**
 * Publishes at a steady rate for a while, each publish started on its schedule whether or not the
 * ones before it have been answered (an offered load, not a closed loop).
 */
export async function paced(opts: {
  ratePerS: number;
  seconds: number;
  send: () => Promise<string>;
}): Promise<PacedRun> {
  const run: PacedRun = { published: new Map(), answerMs: [], failures: 0 };
  const total = Math.round(opts.ratePerS * opts.seconds);
  const start = Date.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / opts.ratePerS;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    const t0 = Date.now();
    inflight.push(
      opts.send().then(
        (eventId) => {
          run.published.set(eventId, t0);
          run.answerMs.push(Date.now() - t0);
        },
        () => void run.failures++,
      ),
    );
  }
  await Promise.all(inflight);
  return run;
}

/** Publish → first arrival of each delivery of the run's events, summarised; and how many never arrived. */
export function firstAttemptLatency(run: PacedRun, arrivals: readonly Arrival[], deliveriesPerEvent: number) {
  const samples: number[] = [];
  for (const [, eventId, at] of arrivals) {
    const t0 = run.published.get(eventId);
    if (t0 !== undefined) samples.push(at - t0);
  }
  return { ...summary(samples), missing: run.published.size * deliveriesPerEvent - samples.length };
}
