import { freePort } from '../../../scripts/lib/free-port';
import { accessTokenKey, serviceEnv, spawnService, waitReady, type ServiceProcess } from './processes';

/**
 * A service as deployed, for fault tests: worker processes and one API process on one task queue,
 * against the PostgreSQL and Temporal named. Workers can be added and killed one by one.
 */
export async function startServicePair(opts: {
  databaseUrl: string;
  temporalAddress: string;
  workers?: number;
  extra?: Record<string, string>;
  /** Set on the workers started here only, not on the API nor on workers added later (a pause point). */
  firstWorkers?: Record<string, string>;
  /** The API's port, when something in front of it must know it first (a gateway). */
  port?: number;
}) {
  const pem = accessTokenKey();
  const port = opts.port ?? (await freePort());
  const env = serviceEnv({
    databaseUrl: opts.databaseUrl,
    temporalAddress: opts.temporalAddress,
    port,
    pem,
    extra: opts.extra,
  });
  const workers: ServiceProcess[] = [];
  let api: ServiceProcess | undefined;
  const baseUrl = `http://127.0.0.1:${port}`;

  const pair = {
    pem,
    baseUrl,
    env,
    workers,
    get api() {
      return api!;
    },
    /** Starts one more worker and waits until it polls; `extra` on top of the pair's environment. */
    async addWorker(extra: Record<string, string> = {}): Promise<ServiceProcess> {
      const worker = spawnService('worker/main.ts', { ...env, ...extra }, `worker-${workers.length + 1}`);
      workers.push(worker);
      await worker.waitForLog(/worker started/, 120_000);
      return worker;
    },
    async startApi(): Promise<void> {
      api = spawnService('server/main.ts', env, 'api');
      await waitReady(baseUrl, 120_000);
    },
    logs: () => [...workers, ...(api ? [api] : [])].map((p) => `--- ${p.name}\n${p.logs()}`).join('\n'),
    async stop(): Promise<void> {
      await Promise.all([...workers, ...(api ? [api] : [])].map((p) => p.stop()));
    },
  };
  // One worker first: it applies the migrations the API expects.
  for (let i = 0; i < (opts.workers ?? 1); i++) await pair.addWorker(opts.firstWorkers);
  await pair.startApi();
  return pair;
}

export type ServicePair = Awaited<ReturnType<typeof startServicePair>>;
