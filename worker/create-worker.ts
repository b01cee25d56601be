import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Config } from '../lib/runtime/config';
import { temporalConnectionOptions, type TemporalConnectionConfig } from '../lib/runtime/temporal';
import { dataConverterOf, type PayloadKeyConfig } from '../lib/runtime/payload-codec';
import { createActivities, type ActivityDeps } from '../activities';
import { bundleWorkflows } from './bundle-workflows';
import { attemptSlotsOf } from '../domain/attempt-slots';
import { temporalWorkerTracing, tracingOn, WORKFLOW_TRACING_MODULE } from '../lib/runtime/tracing';
import type { DeploymentVersion } from '../lib/runtime/build-id';

export interface WorkerSetup {
  config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE' | 'TEMPORAL_TASK_QUEUE'> &
    Partial<
      Pick<
        Config,
        'WORKER_MAX_CACHED_WORKFLOWS' | 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS' | 'WORKER_SHUTDOWN_GRACE_SECONDS'
      >
    > &
    TemporalConnectionConfig &
    PayloadKeyConfig;
  deps: ActivityDeps;
  /**
   * The Worker Deployment version it polls as (lib/runtime/build-id.ts deploymentVersionOf); unset, it
   * polls unversioned (docs/decisions/0386-worker-deployment-versions.md).
   */
  version?: DeploymentVersion | null;
  /** Pre-bundled workflow code (tests bundle once for every worker); otherwise bundled at start, in a thread. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  connection?: NativeConnection;
}

/** A worker for every workflow and activity of the service. Run as many as the load needs. */
export async function createWorker(setup: WorkerSetup): Promise<Worker> {
  const connection = setup.connection ?? (await NativeConnection.connect(temporalConnectionOptions(setup.config)));
  // Traced, the workflows are bundled with the OpenTelemetry workflow interceptors.
  const traced = tracingOn();
  return Worker.create({
    ...temporalWorkerTracing(),
    connection,
    namespace: setup.config.TEMPORAL_NAMESPACE,
    taskQueue: setup.config.TEMPORAL_TASK_QUEUE,
    // Each workflow type states its behaviour in workflows/index.ts; one added without a statement
    // upgrades, as unversioned workers always did (docs/decisions/0387-versioning-behaviour-per-workflow.md).
    ...(setup.version && {
      workerDeploymentOptions: {
        useWorkerVersioning: true,
        version: setup.version,
        defaultVersioningBehavior: 'AUTO_UPGRADE',
      },
    }),
    // Payloads are sealed here, before the server stores them (lib/runtime/payload-codec.ts).
    dataConverter: dataConverterOf(setup.config),
    activities: createActivities(setup.deps),
    workflowBundle: setup.workflowBundle ??
      prebuiltBundle(traced) ?? {
        code: await bundleWorkflows(traced ? [WORKFLOW_TRACING_MODULE] : []),
      },
    maxCachedWorkflows: setup.config.WORKER_MAX_CACHED_WORKFLOWS ?? 100,
    // A local activity holds its workflow task: half the tasks may wait on one (a `workflow` shape
    // attempt's POST), the rest stay for the pollers (docs/decisions/0334-workflow-shape-attempts-local.md).
    maxConcurrentWorkflowTaskExecutions: setup.config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS ?? 100,
    maxConcurrentLocalActivityExecutions: attemptSlotsOf(setup.config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS ?? 100),
    // Many workflow tasks are a new workflow's first (webhook fan-outs and deliveries), which come on
    // the non-sticky queue: the fixed default gives it 2 of 10 pollers; autoscaling follows the backlog.
    workflowTaskPollerBehavior: { type: 'autoscaling' },
    // Longer than an attempt's 30 s: a deploy lets in-flight attempts finish instead of resending them.
    shutdownGraceTime: `${setup.config.WORKER_SHUTDOWN_GRACE_SECONDS ?? 40}s`,
  });
}

// `npm run build` leaves the bundles beside the compiled worker (dist/workflow-bundle.js, and
// dist/workflow-bundle-traced.js with the OpenTelemetry workflow interceptors).
function prebuiltBundle(traced: boolean): WorkerOptions['workflowBundle'] | undefined {
  const path = join(__dirname, '..', traced ? 'workflow-bundle-traced.js' : 'workflow-bundle.js');
  return existsSync(path) ? { codePath: path } : undefined;
}
