import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startBalancer } from './balancer';
import { startClusterDatabase } from './cluster-database';
import type { Cluster, ClusterOptions } from './cluster-options';
import { preflightCluster } from './cluster-preflight';
import { clusterSecrets } from './cluster-secrets';
import { startClusterTraces } from './cluster-traces';
import { startTlsGateway } from './gateway';
import { serviceProcess, type ServiceProcess } from './service-process';
import { startingPart } from './startup-error';
import { stopProcess, type RunningTemporal } from './temporal-dev-server';
import { startTemporalServer } from './temporal-server';
import { startTemporalUi } from './temporal-ui';
import { untilReady } from './until-ready';
import { temporalSetup } from '../temporal-setup';
import { promoteWhenVersioned } from './version-routing';
import { buildIdOf } from '../../lib/runtime/build-id';

/**
 * The production shape on one machine: PostgreSQL holding Temporal's two databases and the
 * service's, the full Temporal server set up by its schema tool, its Web UI, N workers and M API
 * instances behind one port. Secrets are made once and kept in the data folder, so sealed webhook
 * secrets and issued tokens survive a restart.
 */
export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  await preflightCluster(o);
  const log = o.logPath ?? 'the cluster output';
  mkdirSync(o.dataDir, { recursive: true });
  chmodSync(o.dataDir, 0o755);
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const database = await startClusterDatabase(o);
    stops.push(database.stop);

    let temporal: RunningTemporal | null = null;
    const startTemporal = async () => {
      temporal = await startingPart(
        {
          part: `the Temporal server (ports from ${o.temporalPortBase})`,
          remedy: `read its lines in the log; check that PostgreSQL at ${database.temporal.host}:${database.temporal.port} takes connections`,
          log,
        },
        () =>
          startTemporalServer({
            toolsDir: o.temporalServerDir,
            db: database.temporal,
            portBase: o.temporalPortBase,
            logFile: o.output,
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
    let tracing: Record<string, string> = {};
    if (o.zipkin) {
      const traces = await startClusterTraces({ zipkin: o.zipkin, output: o.output, log });
      stops.push(traces.stop);
      tracesUrl = traces.uiUrl;
      tracing = traces.env;
    }
    const publicUrl = o.tls ? `https://localhost:${o.port}` : `http://localhost:${o.port}`;

    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
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
      // Every process of this build says the same build id: its workers poll as that version (docs/decisions/0386).
      // A release from elsewhere says its own (its dist/build-info.json).
      ...(!o.release && { TRANCHE_BUILD_ID: buildIdOf({ TRANCHE_BUILD_ID: process.env.TRANCHE_BUILD_ID }) ?? '' }),
      ...o.env,
    };
    const workers = Array.from({ length: o.workers }, (_, i) =>
      serviceProcess({
        name: `worker-${i + 1}`,
        entry: 'worker/main',
        env,
        compiled: o.compiled,
        output: o.output,
        release: o.release,
      }),
    );
    const apis = o.apiPorts.map((port, i) =>
      serviceProcess({
        name: `api-${i + 1}`,
        entry: 'server/main',
        env: { ...env, PORT: String(port) },
        compiled: o.compiled,
        output: o.output,
        release: o.release,
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
        () =>
          untilReady(`http://127.0.0.1:${port}/ready`, {
            withinMs: 300_000,
            exited: () => exitedOf([...workers, apis[i]!]),
          }),
      );
    }
    // One build on the shape: its version takes the routing (a deploy of a new build ramps instead, README).
    if (o.promote ?? true)
      await startingPart(
        {
          part: `making this build's Worker Deployment version Current (at ${temporalAddress})`,
          remedy: "read the workers' lines in the log; `npm run -s worker-version -- status` shows the deployment",
          log,
        },
        () => promoteWhenVersioned(temporalAddress, env),
      );
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
      const balancer = await startingPart(
        { part: `the balancer (port ${o.port})`, remedy: `free port ${o.port}, or start with PORT=<another>` },
        () => startBalancer({ port: o.port, upstreams: o.apiPorts }),
      );
      stops.push(balancer.close);
    }

    return {
      baseUrl: o.tls ? publicUrl : `http://127.0.0.1:${o.port}`,
      databaseUrl: database.url,
      migrationUrl: database.ownerUrl,
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
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** The first of `processes` that has exited, said as a sentence; null while all run. */
function exitedOf(processes: ServiceProcess[]): string | null {
  const gone = processes.find((p) => p.child && (p.child.exitCode !== null || p.child.signalCode !== null));
  return gone ? `${gone.name} exited (${gone.child!.signalCode ?? `code ${gone.child!.exitCode}`})` : null;
}
