import type { Client } from '@temporalio/client';
import { RETENTION_WORKFLOW, type RetentionResult } from '../../domain/retention-messages';
import { summary } from './stats';

/** One run of the prune workflow, in ms since epoch, with what it deleted when it finished. */
export interface PruneRun {
  workflowId: string;
  start: number;
  end: number;
  status: string;
  deleted: RetentionResult['deleted'] | null;
}

/** The prune runs the schedule started since `since` (ms), from Temporal's visibility. */
export async function pruneRuns(temporal: Client, since: number): Promise<PruneRun[]> {
  const runs: PruneRun[] = [];
  const query = `WorkflowType = '${RETENTION_WORKFLOW}' AND StartTime >= '${new Date(since).toISOString()}'`;
  for await (const w of temporal.workflow.list({ query })) {
    const end = w.closeTime?.getTime() ?? Date.now();
    let deleted: PruneRun['deleted'] = null;
    if (w.status.name === 'COMPLETED') {
      const result = (await temporal.workflow
        .getHandle(w.workflowId, w.runId, { followRuns: false })
        .result()) as RetentionResult;
      deleted = result.deleted;
    }
    runs.push({ workflowId: w.workflowId, start: w.startTime.getTime(), end, status: w.status.name, deleted });
  }
  return runs.sort((a, b) => a.start - b.start);
}

/** One delivery's flight: published at `t0`, first arrival at `at` (ms since epoch). */
export type Flight = [t0: number, at: number];

/**
 * First-attempt latency split by whether a prune was running during the delivery's flight (its
 * publish to its first arrival overlaps a run), and per fixed window of the soak: each window is
 * "prune" when a run overlaps it.
 */
export function latencyAroundPrunes(flights: readonly Flight[], runs: readonly PruneRun[], windowMs: number) {
  const overlaps = (a: number, b: number) => runs.some((r) => r.start <= b && r.end >= a);
  const during: number[] = [];
  const outside: number[] = [];
  for (const [t0, at] of flights) (overlaps(t0, at) ? during : outside).push(at - t0);

  const windows = new Map<number, number[]>();
  for (const [t0, at] of flights) {
    const w = Math.floor(t0 / windowMs) * windowMs;
    windows.set(w, [...(windows.get(w) ?? []), at - t0]);
  }
  const perWindow = [...windows.entries()]
    .sort(([a], [b]) => a - b)
    .map(([w, samples]) => ({
      window_start: new Date(w).toISOString(),
      prune: overlaps(w, w + windowMs),
      ...summary(samples),
    }));
  const p99s = (prune: boolean) => perWindow.filter((w) => w.prune === prune).map((w) => w.p99);
  return {
    during_prune: summary(during),
    outside_prune: summary(outside),
    window_ms: windowMs,
    windows_with_prune: {
      count: p99s(true).length,
      p99_of_window_p99s: summary(p99s(true)).p99,
      median_window_p99: summary(p99s(true)).p50,
    },
    windows_without_prune: {
      count: p99s(false).length,
      p99_of_window_p99s: summary(p99s(false)).p99,
      median_window_p99: summary(p99s(false)).p50,
    },
    per_window: perWindow,
  };
}
