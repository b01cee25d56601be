import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { startBalancer } from './balancer';
import type { RunningPostgres } from './embedded-postgres';
import { migrateAsOwner } from './migrate-as-owner';
import { TEMPORAL_PORT_OFFSETS } from './free-port';
import { startTlsGateway } from './gateway';
import { ensurePortsFree, type WantedPort } from './ports';
import { clusterSecrets } from './cluster-secrets';
import { startingPart, StartupError } from './startup-error';
import { serviceProcess, type ServiceProcess } from './service-process';
import { stopProcess, type RunningTemporal } from './temporal-dev-server';
import { startTemporalServer, type TemporalDatabase } from './temporal-server';
import { startTemporalUi } from './temporal-ui';
import { startZipkin } from './zipkin';
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
  /** With databaseUrl: the owner role's URL of that database, for migrations (DATABASE_MIGRATION_URL); unset, databaseUrl. */
  migrationUrl?: string;
  pgPort: number;
  uiPort?: number;
  /** Paths of the tools: the folder with `server` and `sql`, and the UI server (optional). */
  temporalServerDir: string;
  temporalUi?: string;
  /**
   * Traces: Zipkin's jar (scripts/tools.sh zipkin) and its one port (spans in, API and
   * UI out); the workers and API instances export to it, unless the environment already names an
   * OTEL_* exporter or endpoint of its own. Unset: no traces.
   */
  zipkin?: { jar: string; port: number };
  /** Run dist/ (npm run build) rather than the TypeScript source. */
  compiled: boolean;
  /** Extra environment for every worker and API instance. */
  env?: Record<string, string>;
  output: NodeJS.WritableStream;
  /** Where `output` goes (a file's path), named when a part fails. */
  logPath?: string;
  /**
   * HTTPS on `port`: Caddy ends TLS (its own local CA) in front of a gateway as deploy/gateway has
   * it, on `innerPort`, instead of the balancer; PUBLIC_BASE_URL is then https://localhost:<port>.
   */
  tls?: { caddy: string; innerPort: number };
}

export interface Cluster {
  baseUrl: string;
  databaseUrl: string;
  temporalAddress: string;
  uiUrl: string | null;
  /** Zipkin's UI, when it runs. */
  tracesUrl: string | null;
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
  await preflight(o);
  const log = o.logPath ?? 'the cluster output';
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
      const dir = join(o.dataDir, 'postgres');
      const logFile = join(o.dataDir, 'postgres.log');
      postgres = await startingPart(
        {
          part: `PostgreSQL (embedded, port ${o.pgPort}, data in ${dir})`,
          remedy:
            'read its log; if another PostgreSQL runs on this data folder (left over from an earlier run), stop it; if the folder is damaged, move it away and start again (the data is made anew)',
          log: logFile,
        },
        () => startEmbeddedPostgres({ dir, port: o.pgPort, persistent: true, logFile }),
      );
    };
    // The services' URL and the owner's, for migrations and Temporal's own databases (docs/decisions/0265).
    let databaseUrl = o.databaseUrl;
    let ownerUrl = o.migrationUrl ?? databaseUrl;
    if (!databaseUrl) {
      await startPg();
      stops.push(async () => postgres?.stop());
      await postgres!.createDatabase('tranche');
      await postgres!.ensureServiceRole();
      ownerUrl = postgres!.url('tranche');
      databaseUrl = postgres!.serviceUrl('tranche');
    }
    await startingPart(
      {
        part: 'the database migrations (as the owner)',
        remedy: 'read the error; the owner role (DATABASE_MIGRATION_URL) must be allowed DDL on the database',
      },
      () => migrateAsOwner(ownerUrl!),
    );
    const url = new URL(ownerUrl!);
    const db: TemporalDatabase = {
      host: url.hostname,
      port: Number(url.port || 5432),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
    };

    const temporalLog = o.output;
    let temporal: RunningTemporal | null = null;
    const startTemporal = async () => {
      temporal = await startingPart(
        {
          part: `the Temporal server (ports from ${o.temporalPortBase})`,
          remedy: `read its lines in the log; check that PostgreSQL at ${db.host}:${db.port} takes connections`,
          log,
        },
        () =>
          startTemporalServer({
            toolsDir: o.temporalServerDir,
            db,
            portBase: o.temporalPortBase,
            logFile: temporalLog,
          }),
      );
    };
    await startTemporal();
    stops.push(async () => temporal?.stop());
    const temporalAddress = `127.0.0.1:${o.temporalPortBase}`;
    await startingPart(
      {
        part: `the Temporal setup (namespace and search attributes, at ${temporalAddress})`,
        remedy: 'check that Temporal answers at that address, then run `npm run temporal:setup` to see the whole error',
      },
      () => temporalSetup({ ...process.env, TEMPORAL_ADDRESS: temporalAddress }),
    );

    let uiUrl: string | null = null;
    if (o.temporalUi && o.uiPort) {
      const ui = await startingPart(
        { part: `the Temporal Web UI (port ${o.uiPort})`, remedy: 'read its lines in the log', log },
        () =>
          startTemporalUi({
            binary: o.temporalUi!,
            temporalAddress,
            port: o.uiPort!,
            codecEndpoint: `http://localhost:${o.port}/console/codec`,
            output: o.output,
          }),
      );
      stops.push(ui.stop);
      uiUrl = ui.url;
    }
    let tracesUrl: string | null = null;
    const tracing: Record<string, string> = {};
    if (o.zipkin) {
      const zipkin = await startingPart(
        {
          part: `Zipkin (port ${o.zipkin.port})`,
          remedy: 'read its lines in the log; it needs Java 17 or later on PATH (or JAVA_HOME)',
          log,
        },
        () => startZipkin({ ...o.zipkin!, output: o.output }),
      );
      stops.push(zipkin.stop);
      tracesUrl = zipkin.uiUrl;
      if (!OWN_EXPORT.some((name) => process.env[name])) {
        tracing.OTEL_TRACES_EXPORTER = 'zipkin';
        tracing.OTEL_EXPORTER_ZIPKIN_ENDPOINT = zipkin.spansEndpoint;
      }
    }
    const publicUrl = o.tls ? `https://localhost:${o.port}` : `http://localhost:${o.port}`;

    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      // The services never hold the owner's URL (blank is unset, lib/runtime/config.ts).
      DATABASE_MIGRATION_URL: '',
      TEMPORAL_ADDRESS: temporalAddress,
      PUBLIC_BASE_URL: publicUrl,
      // The balancer (or the TLS gateway) sets X-Forwarded-For; the instances sit behind that one proxy.
      TRUST_PROXY: 'true',
      TRUST_PROXY_HOPS: '1',
      ...clusterSecrets(o.dataDir),
      // The shape takes no money on this machine: the sandbox, knowingly, which /ready and the
      // console's header then say (docs/decisions/0259-production-by-default.md).
      ...(process.env.PAYMENT_PROCESSOR === 'stripe' ? {} : { PAYMENTS_SANDBOX_IN_PRODUCTION: 'true' }),
      ...tracing,
      ...o.env,
    };
    const workers = Array.from({ length: o.workers }, (_, i) =>
      serviceProcess({ name: `worker-${i + 1}`, entry: 'worker/main', env, compiled: o.compiled, output: o.output }),
    );
    const apis = o.apiPorts.map((port, i) =>
      serviceProcess({
        name: `api-${i + 1}`,
        entry: 'server/main',
        env: { ...env, PORT: String(port) },
        compiled: o.compiled,
        output: o.output,
      }),
    );
    // Migrated above as the owner: the workers and the APIs find nothing pending.
    for (const p of [...workers, ...apis]) {
      p.start();
      stops.push(() => p.stop());
    }
    for (const [i, port] of o.apiPorts.entries()) {
      await startingPart(
        {
          part: `API instance ${apis[i]!.name} (port ${port})`,
          remedy: `read its lines ([${apis[i]!.name}], and the workers' before them) in the log; GET /ready on it names the dependency it cannot reach`,
          log,
        },
        () => untilReady(`http://127.0.0.1:${port}/ready`, [...workers, apis[i]!]),
      );
    }
    if (o.tls) {
      const gateway = await startTlsGateway({
        caddy: o.tls.caddy,
        port: o.port,
        innerPort: o.tls.innerPort,
        upstreams: o.apiPorts,
        dataDir: join(o.dataDir, 'gateway'),
        output: o.output,
      });
      stops.push(gateway.stop);
    } else {
      const balancer: Server = await startingPart(
        { part: `the balancer (port ${o.port})`, remedy: `free port ${o.port}, or start with PORT=<another>` },
        () => startBalancer({ port: o.port, upstreams: o.apiPorts }),
      );
      stops.push(() => new Promise((resolve) => balancer.close(() => resolve())));
    }

    return {
      baseUrl: o.tls ? publicUrl : `http://127.0.0.1:${o.port}`,
      databaseUrl,
      temporalAddress,
      uiUrl,
      tracesUrl,
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

/** Variables that already say where traces go: the cluster then leaves them be, Zipkin runs unused. */
const OWN_EXPORT = [
  'OTEL_TRACES_EXPORTER',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_ZIPKIN_ENDPOINT',
];

/** Before anything starts: the tools are there and every port is free, or say which and what to do. */
async function preflight(o: ClusterOptions): Promise<void> {
  const missing = ['server', 'sql'].filter(
    (tool) => !o.temporalServerDir || !existsSync(join(o.temporalServerDir, tool)),
  );
  if (missing.length)
    throw new StartupError({
      part: 'the Temporal server build',
      problem: o.temporalServerDir
        ? `no ${missing.join(' and ')} in ${o.temporalServerDir}`
        : 'TEMPORAL_SERVER_DIR is not set',
      remedy:
        'build it with bash scripts/tools.sh temporal-server (npm run cluster does), or point TEMPORAL_SERVER_DIR at the folder holding server and sql',
    });
  if (o.tls && !existsSync(o.tls.caddy))
    throw new StartupError({
      part: 'Caddy (CLUSTER_TLS=1)',
      problem: `no Caddy at ${o.tls.caddy}`,
      remedy: 'build it with bash scripts/tools.sh caddy (npm run cluster does), or run without CLUSTER_TLS',
    });
  const wanted: WantedPort[] = [
    { port: o.port, part: o.tls ? 'the TLS gateway' : 'the balancer', setting: 'PORT' },
    ...o.apiPorts.map((port, i) => ({ port, part: `API instance api-${i + 1}`, setting: `CLUSTER_API_PORT_${i + 1}` })),
    {
      port: o.temporalPortBase,
      part: 'the Temporal server',
      setting: 'TEMPORAL_PORT_BASE',
      offsets: TEMPORAL_PORT_OFFSETS,
    },
  ];
  if (!o.databaseUrl) wanted.push({ port: o.pgPort, part: 'PostgreSQL (embedded)', setting: 'EMBEDDED_PG_PORT' });
  if (o.temporalUi && o.uiPort)
    wanted.push({ port: o.uiPort, part: 'the Temporal Web UI', setting: 'TEMPORAL_UI_PORT' });
  if (o.zipkin) wanted.push({ port: o.zipkin.port, part: 'Zipkin (traces and their UI)', setting: 'ZIPKIN_PORT' });
  if (o.tls) wanted.push({ port: o.tls.innerPort, part: 'the gateway behind TLS', setting: 'CLUSTER_GATEWAY_PORT' });
  await ensurePortsFree(wanted, 'npm run cluster');
}

/** Until the instance answers ready; fails at once when one of `processes` has exited. */
async function untilReady(url: string, processes: ServiceProcess[]): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    const gone = processes.find((p) => p.child && (p.child.exitCode !== null || p.child.signalCode !== null));
    if (gone) throw new Error(`${gone.name} exited (${gone.child!.signalCode ?? `code ${gone.child!.exitCode}`})`);
    if (
      await fetch(url, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`it did not answer ${url} within 300 s`);
}
