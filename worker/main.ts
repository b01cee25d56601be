import { loadConfig } from '../lib/config';
import { logger } from '../lib/logger';
import { migrate, openOrm } from '../db/orm';
import { engineDispatcher } from '../activities/event-dispatcher';
import { createProcessor } from '../payments';
import { createWorker } from './create-worker';
import { Connection } from '@temporalio/client';
import { connectClient, ensureSearchAttributes } from '../lib/temporal';
import { startOutboxRelay } from './outbox-relay';
import { startWorkerMetrics } from './metrics-server';

/** A worker process: connects to Temporal and PostgreSQL from the environment and runs until signalled. */
async function main(): Promise<void> {
  const config = loadConfig();
  const metrics = startWorkerMetrics(config);
  const orm = await openOrm(config);
  await migrate(orm);
  await registerSearchAttributes(config);
  const temporal = await connectClient(config);
  const dispatcher = engineDispatcher(temporal, orm, config);
  const worker = await createWorker({ config, deps: { orm, processor: createProcessor(config, { orm }), dispatcher, config } });
  // Events whose publisher died between commit and dispatch are handed over from here (spec §6.1).
  const relay = startOutboxRelay({ orm, dispatcher, graceMs: config.OUTBOX_RELAY_GRACE_MS, intervalMs: config.OUTBOX_RELAY_INTERVAL_MS, stuckAfterMs: config.WEBHOOK_STUCK_AFTER_MS });
  logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, temporal: config.TEMPORAL_ADDRESS }, 'worker started');
  await worker.run(); // the SDK shuts down gracefully on SIGINT/SIGTERM
  await relay.stop();
  await temporal.connection.close();
  await orm.close();
  metrics?.close();
  logger.info('worker stopped');
}

async function registerSearchAttributes(config: ReturnType<typeof loadConfig>): Promise<void> {
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS, connectTimeout: '10s' });
  try {
    await ensureSearchAttributes(connection, config.TEMPORAL_NAMESPACE);
  } finally {
    await connection.close();
  }
}

main().catch((err) => {
  logger.fatal({ err }, 'worker failed');
  process.exit(1);
});
