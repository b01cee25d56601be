import './tracing-preload'; // first: see the file
import { loadConfig } from '../lib/runtime/config';
import { logger } from '../lib/runtime/logger';
import { openOrmWhenReachable, prepareServiceDatabase } from '../db/orm';
import { currentAuditKey } from '../db/audit-log';
import { createProcessor } from '../payments';
import { createWorker } from './create-worker';
import { NativeConnection } from '@temporalio/worker';
import { clientOn, temporalConnectionOptions, temporalDependency } from '../lib/runtime/temporal';
import { whenReachable } from '../lib/runtime/startup-wait';
import { createDeliveryEngine } from '../webhooks';
import { startWorkerMetrics } from './worker-metrics';
import { ensureRetentionSchedule } from './retention-schedule';
import { ensureCommitmentSweepSchedule } from './commitment-sweep-schedule';
import { ensureAuditCheckpoints } from './audit-checkpoints';
import { stopTracing } from '../lib/runtime/tracing';
import { warmWorker } from './warm-up';
import { deploymentVersionOf } from '../lib/runtime/build-id';
import { followRouting } from './deployment-routing';

/**
 * A worker process: connects to Temporal and PostgreSQL from the environment and runs until signalled.
 * It needs no operator rights: the namespace's search attributes come from `npm run temporal:setup`.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  // Which build this is, as the Worker Deployment version it polls as (docs/decisions/0386); asked first,
  // so a versioned worker without a build id stops before it connects to anything.
  const version = deploymentVersionOf(config);
  const metrics = startWorkerMetrics(config);
  const orm = await openOrmWhenReachable(config);
  // No key, no start: an audited action would otherwise fail only when first tried (docs/decisions/0266).
  currentAuditKey();
  await prepareServiceDatabase(orm, config);
  // One connection for the worker and the engine's client, so a delivery workflow the engine starts
  // can take its first task straight back here (docs/decisions/0331-eager-delivery-starts.md).
  const connection = await whenReachable(
    temporalDependency(config, () => NativeConnection.connect(temporalConnectionOptions(config))),
    config.STARTUP_WAIT_SECONDS,
  );
  const temporal = clientOn(connection, config);
  const engine = createDeliveryEngine({ orm, config });
  const worker = await createWorker({
    config,
    version,
    connection,
    deps: { orm, processor: createProcessor(config, { orm }), engine, config },
  });
  // Eager starts only while new workflows are routed to this build (worker/deployment-routing.ts).
  const routing = followRouting(temporal, config.TEMPORAL_NAMESPACE, version);
  // First attempts straight from the queue, the sweep, the hand-overs to the retry schedulers.
  const delivering = await engine.start({
    temporal,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    eagerStarts: routing.routedHere,
  });
  // Retention: a worker that cannot ensure the schedule still delivers; the error says why.
  await ensureRetentionSchedule(temporal, config).catch((err: unknown) =>
    logger.error({ err }, 'retention schedule could not be ensured; old rows are not pruned'),
  );
  // The commitment sweep (docs/decisions/0371-commitment-sweep.md): likewise; stranded holds then stay held.
  await ensureCommitmentSweepSchedule(temporal, config).catch((err: unknown) =>
    logger.error({ err }, 'commitment sweep schedule could not be ensured; stranded capacity is not freed'),
  );
  // Audit checkpoints (docs/decisions/0267): likewise; audit:verify then finds no recent checkpoint.
  await ensureAuditCheckpoints(temporal, config, orm.em.getConnection().getKnex()).catch((err: unknown) =>
    logger.error({ err }, 'audit checkpoint workflow could not be ensured; audit heads are not checkpointed'),
  );
  logger.info(
    { taskQueue: config.TEMPORAL_TASK_QUEUE, temporal: config.TEMPORAL_ADDRESS, version: version ?? 'unversioned' },
    'worker started',
  );
  const running = worker.run(); // the SDK shuts down gracefully on SIGINT/SIGTERM
  // Every API's /ready waits for a warm worker (docs/decisions/0302-warm-before-ready.md).
  await warmWorker(worker, delivering).catch((err: unknown) =>
    logger.error({ err }, 'worker warm-up failed; APIs stay not ready until a worker is warm'),
  );
  await running;
  routing.stop();
  await delivering.stop();
  await connection.close();
  await orm.close();
  metrics?.close();
  await stopTracing();
  logger.info('worker stopped');
}

main().catch((err) => {
  logger.fatal({ err }, 'worker failed');
  process.exit(1);
});
