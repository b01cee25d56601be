import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stopProcess } from '../../scripts/lib/temporal-dev-server';
import { newPayloadKey } from '../../scripts/lib/payload-key-file';
import { SERVICE_RUNTIME, type ServiceRuntime } from '../../scripts/lib/service-runtime';
import { DEV_AUDIT_HMAC_KEYS, DEV_PERSONAL_DATA_KEYS } from '../../scripts/lib/embedded-defaults';

const root = join(__dirname, '..', '..');

/** A worker and an API as separate processes (as deployed), so each can be measured alone. */
export async function startServiceProcesses(env: Record<string, string>, port: number) {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  // The benchmark is one client by design, so the per-client write limit is lifted.
  // The bench's own Temporal clients read what these processes seal (dataConverterFromEnv).
  process.env.TEMPORAL_PAYLOAD_KEYS ??= newPayloadKey();
  const common = {
    ...process.env,
    // The bench's stack is a local one: the development opt-in (docs/decisions/0259-production-by-default.md).
    NODE_ENV: 'development',
    WRITE_RATE_LIMIT: '1000000',
    // The bench's stack is a development one: npm start's public audit key (docs/decisions/0266).
    AUDIT_HMAC_KEYS: process.env.AUDIT_HMAC_KEYS ?? DEV_AUDIT_HMAC_KEYS,
    PERSONAL_DATA_KEYS: process.env.PERSONAL_DATA_KEYS ?? DEV_PERSONAL_DATA_KEYS,
    ...env,
    LOG_LEVEL: 'warn',
    ACCESS_TOKEN_PRIVATE_KEY: pem,
    PORT: String(port),
  };
  // BENCH_PROFILE=<dir> writes each service's CPU profile there when it stops (open in Chrome DevTools).
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const start = (file: string, runtime: ServiceRuntime): ChildProcess =>
    spawn(process.execPath, [...runtime.args, ...profile, '--import', 'tsx', join(root, file)], {
      env: { ...common, ...runtime.env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  const startedAt = Date.now();
  const worker = start('worker/main.ts', SERVICE_RUNTIME.worker);
  await new Promise((r) => setTimeout(r, 4000)); // the worker connects first (the stack migrated, as the owner)
  const api = start('server/main.ts', SERVICE_RUNTIME.api);
  const baseUrl = `http://127.0.0.1:${port}`;
  // Looked at often: the start-up phase measures from the moment /ready first answers 200.
  let ready: { at: number; body: unknown } | undefined;
  for (const deadline = Date.now() + 180_000; !ready && Date.now() < deadline;) {
    ready = await fetch(`${baseUrl}/ready`, { signal: AbortSignal.timeout(5000) }).then(
      async (r) => (r.ok ? { at: Date.now(), body: ((await r.json()) as { data: unknown }).data } : undefined),
      () => undefined,
    );
    if (!ready) await new Promise((r) => setTimeout(r, 50));
  }
  if (!ready) {
    await Promise.all([stopProcess(api), stopProcess(worker)]);
    throw new Error(`the API at ${baseUrl} did not answer /ready within 180 s`);
  }
  return {
    baseUrl,
    /** When /ready first answered 200 (ms since epoch), how long after the worker was started, and what it said. */
    readyAt: ready.at,
    readyAfterMs: ready.at - startedAt,
    readyBody: ready.body,
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
