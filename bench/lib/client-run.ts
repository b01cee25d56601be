import { join } from 'node:path';
import { CLIENT_PHASES, warmUp, type ClientContext } from './client-phases';
import { trancheTarget, type ClientTarget } from './client-target';
import { engineCeiling } from './engine-ceiling';
import { cpuByRole, cpuUsed, hostWindow, startHog, vmstat } from './host';
import { startSink, type Sink } from './sink';
import { startSvix, svixTarget } from './svix-peer';
import { startTree } from './tree-service';

/** A system the client benchmark measures: a checkout of Tranche (`npm start` in `dir`), or the Svix peer. */
export type SystemSpec =
  | { label: string; kind: 'tranche'; dir: string; commit: string; env?: Record<string, string> }
  | { label: string; kind: 'svix' };

export interface RunOptions {
  round: number;
  /** Phase lengths and counts, shortened by BENCH_SCALE. */
  seconds(s: number): number;
  count(n: number): number;
  /** Each phase again with a CPU hog running (host.ts). */
  hog: boolean;
  /** Where each system's own output goes, a file per run. */
  logDir: string;
}

/** Phase lengths and counts at BENCH_SCALE (below 1: a smoke run, which writes no results). */
export const scaled = (scale: number) => ({
  seconds: (s: number) => Math.max(3, Math.round(s * scale)),
  count: (n: number) => Math.max(10, Math.round(n * scale)),
});

const round1 = (n: number) => Math.round(n * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Started {
  target: ClientTarget;
  /** The processes whose CPU is the system's (and their descendants). */
  roots: number[];
  temporalAddress: string | null;
  readyAfterMs: number;
  stop(): Promise<void>;
}

async function start(spec: SystemSpec, sink: Sink, logFile: string): Promise<Started> {
  const t0 = Date.now();
  if (spec.kind === 'svix') {
    const svix = await startSvix(logFile);
    return {
      target: svixTarget(svix.baseUrl, svix.token, sink),
      roots: svix.pids,
      temporalAddress: null,
      readyAfterMs: Date.now() - t0,
      stop: svix.stop,
    };
  }
  const tree = await startTree({ dir: spec.dir, env: spec.env, logFile });
  return {
    target: trancheTarget(tree.baseUrl, sink),
    roots: [tree.pid],
    temporalAddress: tree.temporalAddress,
    readyAfterMs: tree.readyAfterMs,
    stop: tree.stop,
  };
}

/** Every phase once, each with the host's steal and load and each part's CPU while it ran. */
async function phases(ctx: ClientContext, roots: number[]) {
  const figures: Record<string, number> = {};
  const detail: Record<string, unknown> = {};
  for (const [name, phase] of Object.entries(CLIENT_PHASES)) {
    const window = hostWindow();
    const before = cpuByRole(roots);
    const { figures: keys, detail: more, messages } = await phase(ctx);
    const cpu = cpuUsed(before, cpuByRole(roots));
    Object.assign(figures, keys);
    const cpuMsPerMessage = round1((cpu.all! * 1000) / messages);
    if (name === 'burst') figures.burst_cpu_ms_per_message = cpuMsPerMessage;
    detail[name] = { ...more, host: window(), cpu_seconds: cpu, cpu_ms_per_message: cpuMsPerMessage };
    await sleep(2000);
  }
  if (figures.noisy_alone_p99_ms)
    figures.noisy_beside_to_alone = Math.round((figures.noisy_beside_p99_ms! / figures.noisy_alone_p99_ms) * 100) / 100;
  return { figures, detail };
}

/**
 * One run of the client benchmark against one system, started fresh: warmed for 60 s (scaled), the engine's
 * ceiling on its Temporal server (Tranche only), every phase, and with `hog` every phase again beside a CPU hog;
 * then stopped. Records the host's steal and load at the start and the end and over the run
 * (docs/decisions/0394-client-compare-alternates-runs.md).
 */
export async function clientRun(spec: SystemSpec, opts: RunOptions) {
  const failures: string[] = [];
  const startedAt = new Date();
  const atStart = vmstat();
  const whole = hostWindow();
  const sink = await startSink();
  let system: Started | undefined;
  try {
    system = await start(spec, sink, join(opts.logDir, `${spec.label}-round${opts.round}.log`));
    const ctx: ClientContext = {
      target: system.target,
      sink,
      seconds: opts.seconds,
      count: opts.count,
      fail: (m) => failures.push(m),
    };
    await warmUp(ctx, opts.seconds(60));
    const ceiling = system.temporalAddress ? await engineCeiling(system.temporalAddress, opts.seconds(10)) : null;
    const quiet = await phases(ctx, system.roots);
    let hog: { figures: Record<string, number>; detail: Record<string, unknown> } | undefined;
    if (opts.hog) {
      const hogging = startHog();
      try {
        hog = await phases(ctx, system.roots);
      } finally {
        await hogging.stop();
      }
    }
    const stats = await sink.stats();
    if (stats.bad || stats.duplicates)
      failures.push(`sink: ${stats.bad} bad signatures, ${stats.duplicates} duplicates`);
    const ratio = (n: number | undefined) => (ceiling && n ? Math.round((n / ceiling) * 100) / 100 : null);
    // The host's speed taken out: the same figure over the ceiling its own run measured.
    if (ceiling) quiet.figures.burst_accepted_to_engine_ceiling = ratio(quiet.figures.burst_accepted_per_s)!;
    return {
      system: spec.label,
      kind: spec.kind,
      commit: spec.kind === 'tranche' ? spec.commit : null,
      round: opts.round,
      started_at: startedAt.toISOString(),
      minutes: round1((Date.now() - startedAt.getTime()) / 60_000),
      host: { at_start: atStart, at_end: vmstat(), whole_run: whole() },
      ready_after_ms: system.readyAfterMs,
      engine_ceiling_workflows_per_s: ceiling,
      figures: quiet.figures,
      to_engine_ceiling: { burst_delivered: ratio(quiet.figures.burst_delivered_per_s) },
      hog: hog && {
        figures: hog.figures,
        // Each figure beside the hog over the same figure without it, in the same run.
        degradation: Object.fromEntries(
          Object.entries(hog.figures).map(([k, v]) => [k, Math.round((v / quiet.figures[k]!) * 100) / 100]),
        ),
        detail: hog.detail,
      },
      detail: quiet.detail,
      failures,
    };
  } catch (err) {
    failures.push(`${spec.label}: ${(err as Error).message}`);
    const minutes = round1((Date.now() - startedAt.getTime()) / 60_000);
    return {
      system: spec.label,
      kind: spec.kind,
      round: opts.round,
      started_at: startedAt.toISOString(),
      minutes,
      failures,
    };
  } finally {
    await system?.target.close();
    await system?.stop();
    await sink.stop();
  }
}

export type RunResult = Awaited<ReturnType<typeof clientRun>>;
