import { loadConfig } from '../lib/config';
import { logger } from '../lib/logger';
import { migrate, openOrm } from '../db/orm';
import { relayOnlyDispatcher } from '../activities/event-dispatcher';
import { createProcessor } from '../payments';
import { createWorker } from './create-worker';

/** A worker process: connects to Temporal and PostgreSQL from the environment and runs until signalled. */
async function main(): Promise<void> {
  const config = loadConfig();
  const orm = await openOrm(config);
  await migrate(orm);
  const worker = await createWorker({ config, deps: { orm, processor: createProcessor(config), dispatcher: relayOnlyDispatcher } });
  logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, temporal: config.TEMPORAL_ADDRESS }, 'worker started');
  await worker.run(); // the SDK shuts down gracefully on SIGINT/SIGTERM
  await orm.close();
  logger.info('worker stopped');
}

main().catch((err) => {
  logger.fatal({ err }, 'worker failed');
  process.exit(1);
});
