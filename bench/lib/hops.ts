import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Arrival } from './sink';
import { summary } from './stats';

/** The hops of one delivery, in order; each is the time from the previous mark to its own. */
const HOPS = ['api_handler', 'commit', 'notify', 'wake_up', 'claim', 'post_start', 'post', 'record'] as const;

type ApiLine = { d: string; e: string; q: number; s: number; c: number };
type WorkerLine = { d: string; cs: number; ce: number; ps: number; pe: number; re: number };

/**
 * Per-hop p50/p99 of the deliveries the hop logs timed (lib/runtime/hop-log.ts), joined by delivery id:
 *   api_handler  client send → the handler hands the event to the publisher (bench clock → API clock)
 *   commit       → the publish statement has committed (group-commit wait + statement)
 *   notify       → the worker's listener hears the first notification after that commit
 *   wake_up      → the claim round that took it starts (a round already running finishes first)
 *   claim        → that round's claim statement has answered
 *   post_start   → its POST starts (pacing, rate limits)
 *   post         → the POST has been answered
 *   record       → its result is committed (group commit)
 * and `receipt` (client send → the sink's arrival) for the same deliveries. One machine, one clock.
 * `slowest_1_percent`: where the tail spends its time, each hop's mean over the deliveries whose
 * receipt was at or above the p99 (a hop's own p99 says how slow it gets, not whether the slow
 * deliveries were slow there).
 */
export function hopBreakdown(dir: string, sent: Map<string, number>, arrivals: readonly Arrival[]) {
  const api = new Map<string, ApiLine>();
  const worker = new Map<string, WorkerLine>();
  const wakes: number[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.jsonl'))) {
    for (const raw of readFileSync(join(dir, file), 'utf8').split('\n')) {
      if (!raw) continue;
      const line = JSON.parse(raw) as Record<string, number | string>;
      if ('w' in line) wakes.push(line.w as number);
      else if ('q' in line) api.set(line.d as string, line as unknown as ApiLine);
      else if ('cs' in line) worker.set(line.d as string, line as unknown as WorkerLine);
    }
  }
  wakes.sort((a, b) => a - b);
  const firstWakeAfter = (t: number) => {
    let lo = 0;
    let hi = wakes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (wakes[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    return wakes[lo] ?? Infinity;
  };
  const arrivedAt = new Map(arrivals.map(([d, , at]) => [d, at]));
  const samples: Record<(typeof HOPS)[number] | 'receipt', number[]> = {
    api_handler: [],
    commit: [],
    notify: [],
    wake_up: [],
    claim: [],
    post_start: [],
    post: [],
    record: [],
    receipt: [],
  };
  /** Each timed delivery's hops and receipt, for the slowest ones' breakdown. */
  const rows: { receipt: number; hops: number[] }[] = [];
  let joined = 0;
  for (const [d, a] of api) {
    const w = worker.get(d);
    const t0 = sent.get(a.e);
    if (!w || t0 === undefined) continue;
    joined++;
    // A round that started before this commit's notification came (woken by an earlier one) took it without it.
    const woken = Math.min(firstWakeAfter(a.c), w.cs);
    const hop = (from: number, to: number) => Math.max(0, to - from);
    const hops = [
      hop(t0, a.q),
      hop(a.q, a.c),
      hop(a.c, woken),
      hop(woken, w.cs),
      hop(w.cs, w.ce),
      hop(w.ce, w.ps),
      hop(w.ps, w.pe),
      hop(w.pe, w.re),
    ];
    HOPS.forEach((name, i) => samples[name].push(hops[i]!));
    const at = arrivedAt.get(d);
    if (at !== undefined) {
      samples.receipt.push(at - t0);
      rows.push({ receipt: at - t0, hops });
    }
  }
  return {
    deliveries_timed: joined,
    slowest_1_percent: slowest(rows),
    ...Object.fromEntries(
      Object.entries(samples).map(([k, v]) => {
        const { p50, p99, max } = summary(v);
        return [k, { p50, p99, max }];
      }),
    ),
  };
}

/** The deliveries whose receipt was at or above the p99: how many, their receipt's mean, and each hop's mean. */
function slowest(rows: readonly { receipt: number; hops: number[] }[]) {
  if (rows.length === 0) return { deliveries: 0 };
  const p99 = summary(rows.map((r) => r.receipt)).p99;
  const tail = rows.filter((r) => r.receipt >= p99);
  const mean = (pick: (r: (typeof tail)[number]) => number) =>
    Math.round((tail.reduce((sum, r) => sum + pick(r), 0) / tail.length) * 10) / 10;
  return {
    deliveries: tail.length,
    receipt_mean: mean((r) => r.receipt),
    ...Object.fromEntries(HOPS.map((name, i) => [`${name}_mean`, mean((r) => r.hops[i]!)])),
  };
}
