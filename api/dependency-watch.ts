import type { ApiDeps } from './deps';
import { dependencyUnavailable, type Dependency } from '../lib/errors';
import { logger } from '../lib/runtime/logger';

/** How long a probe may take before its dependency counts as unreachable. */
const PROBE_TIMEOUT_MS = 2000;
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

async function answers(probe: () => Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), PROBE_TIMEOUT_MS);
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

const watches = new WeakMap<object, DependencyWatch>();

/** The app's one watch: `select 1` on the ORM's pool and Temporal's GetSystemInfo, each within the probe timeout. */
export function dependencyWatchOf(deps: Pick<ApiDeps, 'orm' | 'temporal'>): DependencyWatch {
  let watch = watches.get(deps.orm);
  if (!watch) {
    const { connection } = deps.temporal;
    watch = new DependencyWatch({
      database: () => deps.orm.em.getConnection().execute('select 1'),
      temporal: () =>
        connection.withDeadline(Date.now() + PROBE_TIMEOUT_MS, () => connection.workflowService.getSystemInfo({})),
    });
    watches.set(deps.orm, watch);
  }
  return watch;
}
