import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stopProcess } from '../../scripts/lib/temporal-dev-server';
import { WORKER_ENV, WORKER_NODE_ARGS } from '../../scripts/lib/worker-runtime';

const root = join(__dirname, '..', '..');

/** A worker and an API as separate processes (as deployed), so each can be measured alone. */
export async function startServiceProcesses(env: Record<string, string>, port: number) {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  // The benchmark is one client by design, so the per-client write limit is lifted.
  const common = {
    ...process.env,
    // The bench's stack is a local one: the development opt-in (docs/decisions/0259-production-by-default.md).
    NODE_ENV: 'development',
    WRITE_RATE_LIMIT: '1000000',
    ...env,
    LOG_LEVEL: 'warn',
    ACCESS_TOKEN_PRIVATE_KEY: pem,
    PORT: String(port),
  };
  // BENCH_PROFILE=<dir> writes each service's CPU profile there when it stops (open in Chrome DevTools).
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const start = (
    file: string,
    runtime: { args: string[]; env: Record<string, string> } = { args: [], env: {} },
  ): ChildProcess =>
    spawn(process.execPath, [...runtime.args, ...profile, '--import', 'tsx', join(root, file)], {
      env: { ...common, ...runtime.env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  const worker = start('worker/main.ts', { args: WORKER_NODE_ARGS, env: WORKER_ENV });
  await new Promise((r) => setTimeout(r, 4000)); // the worker migrates first
  const api = start('api/main.ts');
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`${baseUrl}/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 300));
  }
  return {
    baseUrl,
    accessTokenKeyPem: pem,
    workerPid: worker.pid!,
    apiPid: api.pid!,
    stop: () => Promise.all([stopProcess(api), stopProcess(worker)]),
  };
}

export type ServiceProcesses = Awaited<ReturnType<typeof startServiceProcesses>>;

/** Resident set size of a process, in MiB (Linux). */
export function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}
