import { Runtime } from '@temporalio/worker';
import type { Config } from '../lib/runtime/config';
import { logger } from '../lib/runtime/logger';
import { serveMetrics } from '../lib/runtime/metrics-server';

/**
 * A worker's two metrics ports: the Temporal SDK's own exporter (task slots, poll and schedule
 * latencies, sticky cache) and this service's registry (webhook deliveries and attempts, which
 * activities record in this process). Must run before the first NativeConnection: the SDK's
 * runtime is installed once per process.
 */
export function startWorkerMetrics(
  config: Pick<Config, 'METRICS_HOST' | 'TEMPORAL_METRICS_PORT' | 'WORKER_METRICS_PORT'>,
): { close(): void } | undefined {
  if (config.TEMPORAL_METRICS_PORT) {
    const bindAddress = `${config.METRICS_HOST}:${config.TEMPORAL_METRICS_PORT}`;
    Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress, countersTotalSuffix: true } } } });
    logger.info({ bindAddress }, 'temporal sdk metrics exported');
  }
  if (!config.WORKER_METRICS_PORT) return undefined;
  const serving = serveMetrics(config.METRICS_HOST, config.WORKER_METRICS_PORT, 'worker');
  serving.catch((err: unknown) => logger.error({ err }, 'worker metrics port could not be opened'));
  return {
    close: () =>
      void serving.then(
        (server) => server.close(),
        () => undefined,
      ),
  };
}
