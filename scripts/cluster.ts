/**
 * `npm run cluster`: the production shape on this machine (scripts/lib/cluster.ts), compiled code,
 * data in .data/cluster/ (git-ignored). Ctrl-C stops everything it started.
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { startCluster } from './lib/cluster';

const root = join(__dirname, '..');
const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

async function main(): Promise<void> {
  const started = Date.now();
  const dataDir = join(root, '.data', 'cluster');
  const port = num('PORT', 3000);
  const cluster = await startCluster({
    dataDir,
    port,
    apiPorts: [num('CLUSTER_API_PORT_1', 3001), num('CLUSTER_API_PORT_2', 3002)],
    workers: num('CLUSTER_WORKERS', 2),
    temporalPortBase: num('TEMPORAL_PORT_BASE', 7233),
    databaseUrl: process.env.DATABASE_URL,
    pgPort: num('EMBEDDED_PG_PORT', 5434),
    uiPort: num('TEMPORAL_UI_PORT', 8233),
    temporalServerDir: process.env.TEMPORAL_SERVER_DIR!,
    temporalUi: process.env.TEMPORAL_UI || undefined,
    compiled: true,
    env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: process.env.WEBHOOK_ALLOW_INSECURE_LOOPBACK ?? 'true' },
    output:
      process.env.CLUSTER_LOG === 'stdout'
        ? process.stdout
        : createWriteStream(join(dataDir, 'cluster.log'), { flags: 'a' }),
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('\n[cluster] stopping API instances, workers (they drain), UI, Temporal and PostgreSQL…');
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
      `  API             http://localhost:${port}   (2 instances behind a balancer)`,
      `  Temporal Web UI ${cluster.uiUrl ?? '(UI server not built: bash scripts/tools.sh temporal-ui)'}`,
      `  Temporal gRPC   ${cluster.temporalAddress}   (full server, PostgreSQL persistence)`,
      `  PostgreSQL      ${cluster.databaseUrl.replace(/:[^:@/]+@/, ':***@')}`,
      `  Logs            ${process.env.CLUSTER_LOG === 'stdout' ? 'here' : join(dataDir, 'cluster.log')}`,
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

main().catch((err) => {
  console.error('[cluster] failed:', err);
  process.exit(1);
});
