import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterOptions } from './cluster-options';
import { TEMPORAL_PORT_OFFSETS } from './free-port';
import { ensurePortsFree, type WantedPort } from './ports';
import { StartupError } from './startup-error';

/** Before anything starts: the tools are there and every port is free, or say which and what to do. */
export async function preflightCluster(o: ClusterOptions): Promise<void> {
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
