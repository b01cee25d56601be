import { loadConfig } from '../lib/config';
import { logger } from '../lib/logger';
import { migrate, openOrm } from '../db/orm';
import { engineDispatcher } from '../activities/event-dispatcher';
import { createProcessor } from '../payments';
import { createWorker } from './create-worker';
import { connectClient } from '../lib/temporal';
import { startOutboxRelay } from './outbox-relay';
import { startWorkerMetrics } from './metrics-server';

/**
 * A worker process: connects to Temporal and PostgreSQL from the environment and runs until signalled.
 * It needs no operator rights: the namespace's search attributes come from `npm run temporal:setup`.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const metrics = startWorkerMetrics(config);
  const orm = await openOrm(config);
  await migrate(orm);
  const temporal = await connectClient(config);
  const dispatcher = engineDispatcher(temporal, orm, config);
  const worker = await createWorker({
    config,
    deps: { orm, processor: createProcessor(config, { orm }), dispatcher, config },
  });
  // Events whose publisher died between commit and dispatch are handed over from here (spec §6.1).
  const relay = startOutboxRelay({
    orm,
    dispatcher,
    graceMs: config.OUTBOX_RELAY_GRACE_MS,
    intervalMs: config.OUTBOX_RELAY_INTERVAL_MS,
    stuckAfterMs: config.WEBHOOK_STUCK_AFTER_MS,
  });
  logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, temporal: config.TEMPORAL_ADDRESS }, 'worker started');
  await worker.run(); // the SDK shuts down gracefully on SIGINT/SIGTERM
  await relay.stop();
  await temporal.connection.close();
  await orm.close();
  metrics?.close();
  logger.info('worker stopped');
}

main().catch((err) => {
  logger.fatal({ err }, 'worker failed');
  process.exit(1);
});
