import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { startBalancer } from './balancer';
import type { RunningPostgres } from './embedded-postgres';
import { serviceProcess, type ServiceProcess } from './service-process';
import { stopProcess, type RunningTemporal } from './temporal-dev-server';
import { startTemporalServer, type TemporalDatabase } from './temporal-server';
import { startTemporalUi } from './temporal-ui';
import { temporalSetup } from '../temporal-setup';

/** What `npm run cluster` runs, and the cluster tests drive: ports and counts. */
export interface ClusterOptions {
  dataDir: string;
  /** Public port of the balancer in front of the API instances. */
  port: number;
  apiPorts: number[];
  workers: number;
  temporalPortBase: number;
  /** A PostgreSQL server to use (its URL names the service's database); otherwise an embedded one on pgPort. */
  databaseUrl?: string;
  pgPort: number;
  uiPort?: number;
  /** Paths of the tools: the folder with `server` and `sql`, and the UI server (optional). */
  temporalServerDir: string;
  temporalUi?: string;
  /** Run dist/ (npm run build) rather than the TypeScript source. */
  compiled: boolean;
  /** Extra environment for every worker and API instance. */
  env?: Record<string, string>;
  output: NodeJS.WritableStream;
}

export interface Cluster {
  baseUrl: string;
  databaseUrl: string;
  temporalAddress: string;
  uiUrl: string | null;
  env: Record<string, string>;
  workers: ServiceProcess[];
  apis: ServiceProcess[];
  /** Kill (SIGKILL) and start again: the Temporal server and PostgreSQL, for the fault tests. */
  killTemporal(): Promise<void>;
  startTemporal(): Promise<void>;
  stopPostgres(): Promise<void>;
  startPostgres(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The production shape on one machine: PostgreSQL holding Temporal's two databases and the
 * service's, the full Temporal server set up by its schema tool, its Web UI, N workers and M API
 * instances behind one port. Secrets are made once and kept in the data folder, so sealed webhook
 * secrets and issued tokens survive a restart.
 */
export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  mkdirSync(o.dataDir, { recursive: true });
  chmodSync(o.dataDir, 0o755);
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    let postgres: RunningPostgres | null = null;
    const startPg = async () => {
      // Loaded only when used: embedded-postgres is an ES module, which the tests' CommonJS cannot load.
      const { startEmbeddedPostgres } = await import('./embedded-postgres');
      postgres = await startEmbeddedPostgres({ dir: join(o.dataDir, 'postgres'), port: o.pgPort, persistent: true });
    };
    let databaseUrl = o.databaseUrl;
    if (!databaseUrl) {
      await startPg();
      stops.push(async () => postgres?.stop());
      await postgres!.createDatabase('tranche');
      databaseUrl = postgres!.url('tranche');
    }
    const url = new URL(databaseUrl);
    const db: TemporalDatabase = {
      host: url.hostname,
      port: Number(url.port || 5432),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
    };

    const temporalLog = o.output;
    let temporal: RunningTemporal | null = null;
    const startTemporal = async () => {
      temporal = await startTemporalServer({
        toolsDir: o.temporalServerDir,
        db,
        portBase: o.temporalPortBase,
        logFile: temporalLog,
      });
    };
    await startTemporal();
    stops.push(async () => temporal?.stop());
    const temporalAddress = `127.0.0.1:${o.temporalPortBase}`;
    await temporalSetup({ ...process.env, TEMPORAL_ADDRESS: temporalAddress });

    let uiUrl: string | null = null;
    if (o.temporalUi && o.uiPort) {
      const ui = await startTemporalUi({ binary: o.temporalUi, temporalAddress, port: o.uiPort, output: o.output });
      stops.push(ui.stop);
      uiUrl = ui.url;
    }

    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      PUBLIC_BASE_URL: `http://localhost:${o.port}`,
      // The balancer appends the peer to X-Forwarded-For; the instances sit behind that one proxy.
      TRUST_PROXY: 'true',
      TRUST_PROXY_HOPS: '1',
      ...clusterSecrets(o.dataDir),
      ...o.env,
    };
    const workers = Array.from({ length: o.workers }, (_, i) =>
      serviceProcess({ name: `worker-${i + 1}`, entry: 'worker/main', env, compiled: o.compiled, output: o.output }),
    );
    const apis = o.apiPorts.map((port, i) =>
      serviceProcess({
        name: `api-${i + 1}`,
        entry: 'api/main',
        env: { ...env, PORT: String(port) },
        compiled: o.compiled,
        output: o.output,
      }),
    );
    // The first worker migrates; the others and the APIs then find nothing to do (advisory lock).
    for (const p of [...workers, ...apis]) {
      p.start();
      stops.push(() => p.stop());
    }
    for (const port of o.apiPorts) await untilReady(`http://127.0.0.1:${port}/ready`);
    const balancer: Server = await startBalancer({ port: o.port, upstreams: o.apiPorts });
    stops.push(() => new Promise((resolve) => balancer.close(() => resolve())));

    return {
      baseUrl: `http://127.0.0.1:${o.port}`,
      databaseUrl,
      temporalAddress,
      uiUrl,
      env,
      workers,
      apis,
      async killTemporal() {
        if (temporal) await stopProcess(temporal.process, 0);
      },
      startTemporal,
      async stopPostgres() {
        await (postgres as RunningPostgres | null)?.stop();
      },
      startPostgres: startPg,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

function clusterSecrets(dataDir: string): Record<string, string> {
  const file = join(dataDir, 'secrets.json');
  if (!existsSync(file)) {
    const ecKey = () =>
      generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const secrets = {
      ACCESS_TOKEN_PRIVATE_KEY: ecKey(),
      // The next key of a rotation, published ahead (docs/decisions/0137-access-token-key-rotation.md).
      ACCESS_TOKEN_PUBLISHED_KEYS: ecKey(),
      WEBHOOK_SECRET_KEYS: `k${new Date().toISOString().slice(0, 10).replace(/-/g, '')}:${randomBytes(32).toString('base64')}`,
      SANDBOX_NOTIFICATION_SECRET: randomBytes(32).toString('hex'),
    };
    writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  }
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
}

async function untilReady(url: string): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    if (
      await fetch(url, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${url} not ready within 300 s`);
}
