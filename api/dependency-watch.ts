import type { ApiDeps } from './deps';
import { dependencyUnavailable, type Dependency } from '../lib/errors';
import { logger } from '../lib/runtime/logger';

/** How long a probe may take before its dependency counts as unreachable. */
const PROBE_TIMEOUT_MS = 2000;
/** How late a probe's timer may fire before the lateness counts as this process's stall. */
const STALL_MS = 250;
/** Probe windows at most, each a stall extends by one. */
const MAX_WINDOWS = 3;
/** While all answer, how old the last look may be before a request starts another (in the background). */
const UP_RECHECK_MS = 5000;
/** While one is down, how old the last look may be before a request waits for a fresh one (to see it return). */
const DOWN_RECHECK_MS = 1000;

export type Reachability = Record<Dependency, boolean>;

/**
 * Whether PostgreSQL and Temporal answer, as the API last saw it. Requests drive the looking: while
 * both answer, a request older than UP_RECHECK_MS since the last look starts one in the background
 * (no wait on the way); once one is down, requests wait for a fresh look at most every second, so
 * they are answered 503 at once and the first one after it returns goes through. One look at a
 * time, shared by every request that wants it.
 */
export class DependencyWatch {
  private last: { at: number; reachable: Reachability } = { at: 0, reachable: { database: true, temporal: true } };
  private looking: Promise<Reachability> | null = null;

  constructor(private readonly probes: Record<Dependency, () => Promise<unknown>>) {}

  /** Looks now (or joins the look under way). */
  check(): Promise<Reachability> {
    this.looking ??= this.look().finally(() => (this.looking = null));
    return this.looking;
  }

  /** The dependencies that are down, as fresh as the rules above make it. */
  async down(): Promise<Dependency[]> {
    const age = Date.now() - this.last.at;
    if (downOf(this.last.reachable).length ? age > DOWN_RECHECK_MS : age > UP_RECHECK_MS) {
      const look = this.check();
      if (downOf(this.last.reachable).length) await look;
      else look.catch(() => undefined);
    }
    return downOf(this.last.reachable);
  }

  /** The 503 for the dependencies down now (looking afresh), or null when all answer. */
  async outage(): Promise<ReturnType<typeof dependencyUnavailable> | null> {
    const down = downOf(await this.check());
    return down.length ? dependencyUnavailable(down) : null;
  }

  private async look(): Promise<Reachability> {
    const [database, temporal] = await Promise.all([answers(this.probes.database), answers(this.probes.temporal)]);
    const reachable = { database, temporal };
    const was = downOf(this.last.reachable).join();
    this.last = { at: Date.now(), reachable };
    const now = downOf(reachable).join();
    if (was !== now)
      logger.warn({ down: downOf(reachable) }, now ? 'dependency unreachable' : 'dependencies reachable again');
    return reachable;
  }
}

const downOf = (r: Reachability): Dependency[] => (['database', 'temporal'] as const).filter((d) => !r[d]);

/**
 * Whether the probe answers within PROBE_TIMEOUT_MS of a running process. A timer that fires more
 * than STALL_MS late says this process was stopped (a long GC pause, a starved CPU), not that the
 * dependency was slow: its answer may be waiting, unread, behind the timer. So the answer gets a turn
 * of I/O before the verdict, and a late timer earns a fresh window, at most MAX_WINDOWS in all.
 */
async function answers(probe: () => Promise<unknown>): Promise<boolean> {
  // Called at once; a probe that throws before it has a promise fails like one that rejects.
  const outcome = (async () => probe())().then(
    () => true,
    () => false,
  );
  for (let window = 1; ; window++) {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const answer = await Promise.race([
      outcome,
      new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), PROBE_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    if (answer !== 'late') return answer;
    // The I/O that arrived during a stall is read (poll phase) before this turn's setImmediate.
    const read = await Promise.race([outcome, new Promise<'late'>((resolve) => setImmediate(() => resolve('late')))]);
    if (read !== 'late') return read;
    const late = performance.now() - started - PROBE_TIMEOUT_MS;
    if (late <= STALL_MS || window === MAX_WINDOWS) return false;
  }
}

const watches = new WeakMap<object, DependencyWatch>();

/** The app's one watch: `select 1` on the ORM's pool and Temporal's GetSystemInfo, each timed as `answers` says. */
export function dependencyWatchOf(deps: Pick<ApiDeps, 'orm' | 'temporal'>): DependencyWatch {
  let watch = watches.get(deps.orm);
  if (!watch) {
    const { connection } = deps.temporal;
    watch = new DependencyWatch({
      database: () => deps.orm.em.getConnection().execute('select 1'),
      temporal: () =>
        // The watch times the probe (a stall earns it another window); the deadline only ends the call.
        connection.withDeadline(Date.now() + PROBE_TIMEOUT_MS * MAX_WINDOWS, () =>
          connection.workflowService.getSystemInfo({}),
        ),
    });
    watches.set(deps.orm, watch);
  }
  return watch;
}
