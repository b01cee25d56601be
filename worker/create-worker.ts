import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Config } from '../lib/config';
import { createActivities, type ActivityDeps } from '../activities';
import { bundleWorkflows } from './bundle-workflows';

export interface WorkerSetup {
  config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE' | 'TEMPORAL_TASK_QUEUE'> & Partial<Pick<Config, 'WORKER_MAX_CACHED_WORKFLOWS'>>;
  deps: ActivityDeps;
  /** Pre-bundled workflow code (tests bundle once for every worker); otherwise bundled at start, in a thread. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  connection?: NativeConnection;
}

/** A worker for every workflow and activity of the service. Run as many as the load needs. */
export async function createWorker(setup: WorkerSetup): Promise<Worker> {
  const connection = setup.connection ?? (await NativeConnection.connect({ address: setup.config.TEMPORAL_ADDRESS }));
  return Worker.create({
    connection,
    namespace: setup.config.TEMPORAL_NAMESPACE,
    taskQueue: setup.config.TEMPORAL_TASK_QUEUE,
    activities: createActivities(setup.deps),
    workflowBundle: setup.workflowBundle ?? { code: await bundleWorkflows() },
    maxCachedWorkflows: setup.config.WORKER_MAX_CACHED_WORKFLOWS ?? 200,
    // Many workflow tasks are a new workflow's first (webhook fan-outs and deliveries), which come on
    // the non-sticky queue: the fixed default gives it 2 of 10 pollers; autoscaling follows the backlog.
    workflowTaskPollerBehavior: { type: 'autoscaling' },
    shutdownGraceTime: '10s',
  });
}
