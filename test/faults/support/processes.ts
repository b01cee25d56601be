import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { stopProcess } from '../../../scripts/lib/temporal-dev-server';
import { until } from '../../support/wait';

const root = join(__dirname, '..', '..', '..');

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  /** Every line it wrote so far, stdout and stderr. */
  logs(): string;
  /** Resolves once a line matching `pattern` was written after `since` characters of log. */
  waitForLog(pattern: RegExp, timeoutMs?: number, since?: number): Promise<void>;
  /** SIGKILL: no drain, no goodbye; what a crash looks like to Temporal. */
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Resolves once `api` has logged `count` workflow commands (lib/runtime/workflow-command-log.ts) after
 * `since` characters of its log: the commands have left for Temporal. Fault tests strike at this
 * observed state, not after a sleep.
 */
export async function commandsSent(
  api: ServiceProcess,
  since: number,
  count: number,
  timeoutMs = 60_000,
): Promise<void> {
  const sent = () => api.logs().slice(since).split('"msg":"workflow command"').length - 1;
  await until(`${api.name}: ${count} workflow commands sent`, sent, (n) => n >= count, { timeoutMs, intervalMs: 2 });
}

/** An ES256 key in PKCS#8 PEM, so every process (and the test) signs and verifies one key. */
export function accessTokenKey(): string {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
}

/** The environment a worker/API pair shares, as deployed; `extra` overrides. */
export function serviceEnv(opts: {
  databaseUrl: string;
  temporalAddress?: string;
  port: number;
  pem: string;
  extra?: Record<string, string>;
}): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    DATABASE_URL: opts.databaseUrl,
    TEMPORAL_ADDRESS: opts.temporalAddress ?? process.env.TEMPORAL_ADDRESS ?? '',
    TEMPORAL_TASK_QUEUE: `fault-${randomBytes(5).toString('hex')}`,
    ACCESS_TOKEN_PRIVATE_KEY: opts.pem,
    PORT: String(opts.port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${opts.port}`,
    WRITE_RATE_LIMIT: '1000000',
    // The fault tests' webhook receiver listens on loopback over plain http.
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
    ...opts.extra,
  };
}

/** worker/main.ts or server/main.ts as its own process, as deployed. */
export function spawnService(
  file: 'worker/main.ts' | 'server/main.ts',
  env: Record<string, string>,
  name: string = file,
): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, file)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const waiters = new Set<() => void>();
  const append = (d: Buffer) => {
    text += d.toString();
    for (const w of waiters) w();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name,
    child,
    logs: () => text,
    waitForLog(pattern, timeoutMs = 90_000, since = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(text.slice(since))) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `${name}: no log line matching ${pattern} within ${timeoutMs} ms; last lines:\n${text.slice(-2000)}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    stop: () => stopProcess(child),
  };
}

/** Polls GET /ready until the API answers 200 (it needs PostgreSQL and Temporal). */
export async function waitReady(baseUrl: string, timeoutMs = 90_000): Promise<void> {
  const ready = () =>
    fetch(`${baseUrl}/ready`, { signal: AbortSignal.timeout(5000) }).then(
      (r) => r.ok,
      () => false,
    );
  await until(`${baseUrl} to be ready`, ready, { timeoutMs, intervalMs: 300 });
}

/**
 * Waits until the API sees `dependency` gone (GET /ready answers 503 with it `down`): an outage the
 * service has observed, where a fixed pause only hoped for one.
 */
export async function outageSeen(baseUrl: string, dependency: 'database' | 'temporal', timeoutMs = 30_000) {
  const down = async () => {
    const res = await fetch(`${baseUrl}/ready`, { signal: AbortSignal.timeout(5000) }).catch(() => null);
    if (res?.status !== 503) return false;
    const body = (await res.json()) as { error?: { details?: Record<string, unknown> } };
    return body.error?.details?.[dependency] === 'down';
  };
  await until(`the API to see ${dependency} gone`, down, { timeoutMs, intervalMs: 200 });
}
