import { startStack, type Stack } from '../../scripts/lib/stack';
import { freePortRange } from '../../scripts/lib/free-port';

/** Which Temporal server a benchmark runs on: BENCH_SERVER (scripts/bench.sh --server). */
const BENCH_SERVER = process.env.BENCH_SERVER === 'cluster' ? 'cluster' : 'dev';

/**
 * The benchmark's own stack on the chosen server: the dev server (SQLite, the embedded default) or
 * the full Temporal server on the embedded PostgreSQL (the production shape, `npm run cluster`).
 * `server` says which, for the results; `suffix` keeps each server's results in files of their own.
 */
export async function startBenchStack(opts: {
  dataDir: string;
  database: string;
  persistent: boolean;
  temporalCli?: string;
}): Promise<Stack & { server: string | null; suffix: string }> {
  if (BENCH_SERVER === 'dev') return { ...(await startStack(opts)), server: null, suffix: '' };
  const stack = await startStack({
    ...opts,
    temporalServerDir: process.env.TEMPORAL_SERVER_DIR,
    temporalPort: await freePortRange(210),
  });
  return {
    ...stack,
    server:
      'full Temporal server 1.29.1 on PostgreSQL 18 (4 history shards, deploy/temporal), embedded PostgreSQL 18 (fsync off)',
    suffix: '-cluster',
  };
}
