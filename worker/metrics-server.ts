import { createServer, type Server } from 'node:http';
import { Runtime } from '@temporalio/worker';
import type { Config } from '../lib/config';
import { logger } from '../lib/logger';
import { scrape } from '../lib/metrics';

/**
 * A worker's two metrics ports: the Temporal SDK's own exporter (task slots, poll and schedule
 * latencies, sticky cache) and this service's registry (webhook deliveries and attempts, which
 * activities record in this process). Must run before the first NativeConnection: the SDK's
 * runtime is installed once per process.
 */
export function startWorkerMetrics(config: Pick<Config, 'METRICS_HOST' | 'TEMPORAL_METRICS_PORT' | 'WORKER_METRICS_PORT'>): Server | undefined {
  if (config.TEMPORAL_METRICS_PORT) {
    const bindAddress = `${config.METRICS_HOST}:${config.TEMPORAL_METRICS_PORT}`;
    Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress, countersTotalSuffix: true } } } });
    logger.info({ bindAddress }, 'temporal sdk metrics exported');
  }
  if (!config.WORKER_METRICS_PORT) return undefined;
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    scrape().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (err: unknown) => {
        logger.error({ err }, 'metrics scrape failed');
        res.writeHead(500).end();
      },
    );
  });
  server.requestTimeout = 10_000;
  server.listen(config.WORKER_METRICS_PORT, config.METRICS_HOST, () => logger.info({ port: config.WORKER_METRICS_PORT }, 'worker metrics served'));
  return server;
}
