/**
 * `npm run cluster`: the production shape on this machine (scripts/lib/cluster-stack.ts), compiled code,
 * data in .data/cluster/ (git-ignored). Ctrl-C stops everything it started.
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startCluster } from './lib/cluster-stack';
import { explainStartupFailure } from './lib/startup-error';

const root = join(__dirname, '..');
const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

async function main(): Promise<void> {
  const started = Date.now();
  const dataDir = process.env.TRANCHE_DATA_DIR ?? join(root, '.data', 'cluster');
  const port = num('PORT', 3000);
  const toStdout = process.env.CLUSTER_LOG === 'stdout';
  const logPath = join(dataDir, 'cluster.log');
  if (!toStdout) mkdirSync(dataDir, { recursive: true });
  const tls = process.env.CLUSTER_TLS === '1';
  const cluster = await startCluster({
    dataDir,
    port,
    apiPorts: [num('CLUSTER_API_PORT_1', 3001), num('CLUSTER_API_PORT_2', 3002)],
    workers: num('CLUSTER_WORKERS', 2),
    temporalPortBase: num('TEMPORAL_PORT_BASE', 7233),
    databaseUrl: process.env.DATABASE_URL,
    migrationUrl: process.env.DATABASE_MIGRATION_URL || undefined,
    pgPort: num('EMBEDDED_PG_PORT', 5434),
    uiPort: num('TEMPORAL_UI_PORT', 8233),
    temporalServerDir: process.env.TEMPORAL_SERVER_DIR ?? '',
    temporalUi: process.env.TEMPORAL_UI || undefined,
    zipkin: process.env.ZIPKIN_JAR ? { jar: process.env.ZIPKIN_JAR, port: num('ZIPKIN_PORT', 9411) } : undefined,
    compiled: true,
    // No env of its own: loopback webhook targets stay off (lib/runtime/ssrf-guard.ts) unless this run's own
    // WEBHOOK_ALLOW_INSECURE_LOOPBACK=true asks, as every port of the shape listens on loopback
    // (docs/decisions/0261-cluster-and-compose-closed.md).
    output: toStdout ? process.stdout : createWriteStream(logPath, { flags: 'a' }),
    logPath: toStdout ? 'the output above' : logPath,
    tls: tls ? { caddy: process.env.CADDY ?? 'caddy', innerPort: num('CLUSTER_GATEWAY_PORT', port + 10) } : undefined,
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('\n[cluster] stopping API instances, workers (they drain), Zipkin, UI, Temporal and PostgreSQL…');
    await cluster.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  for (const p of [...cluster.workers, ...cluster.apis]) {
    p.child?.on('exit', (code, signal) => {
      if (!stopping) console.error(`[cluster] ${p.name} exited (${signal ?? code}); the others keep serving`);
    });
  }
  console.log(
    [
      '',
      `Tranche cluster is up (${((Date.now() - started) / 1000).toFixed(1)} s):`,
      tls
        ? `  API             https://localhost:${port}   (TLS ended by Caddy, its own local CA; 2 instances behind its gateway)`
        : `  API             http://localhost:${port}   (2 instances behind a balancer)`,
      `  Temporal Web UI ${cluster.uiUrl ?? '(UI server not built: bash scripts/tools.sh temporal-ui)'}`,
      `  Traces (Zipkin) ${cluster.tracesUrl ?? '(Zipkin not installed: bash scripts/tools.sh zipkin)'}`,
      `  Temporal gRPC   ${cluster.temporalAddress}   (full server, PostgreSQL persistence)`,
      `  PostgreSQL      ${cluster.databaseUrl.replace(/:[^:@/]+@/, ':***@')}   (the services' role)`,
      `  Logs            ${toStdout ? 'here' : logPath}`,
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

main().catch((err) => {
  console.error(explainStartupFailure('[cluster]', err));
  process.exit(1);
});
