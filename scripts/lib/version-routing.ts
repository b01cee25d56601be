import { Connection } from '@temporalio/client';
import { deploymentVersionOf, type DeploymentVersion } from '../../lib/runtime/build-id';
import { ConfigSchema } from '../../lib/runtime/config';

/** How Temporal names the unversioned workers in a deployment's routing. */
const UNVERSIONED = '__unversioned__';
const GRPC_NOT_FOUND = 5;
const GRPC_FAILED_PRECONDITION = 9;

/** Where a deployment routes new and auto-upgrading workflows: build ids, null for the unversioned workers. */
export interface DeploymentRouting {
  current: string | null;
  ramping: string | null;
  rampingPercentage: number;
  /** Each version the deployment knows, with its status (`WORKER_DEPLOYMENT_VERSION_STATUS_…`). */
  versions: { buildId: string; status: string }[];
}

export async function deploymentRouting(
  connection: Connection,
  namespace: string,
  deploymentName: string,
): Promise<DeploymentRouting | null> {
  try {
    const { workerDeploymentInfo: info } = await connection.withDeadline(Date.now() + 10_000, () =>
      connection.workflowService.describeWorkerDeployment({ namespace, deploymentName }),
    );
    const routing = info?.routingConfig;
    const statusName = (s: unknown) => String(s ?? '');
    return {
      current: routing?.currentDeploymentVersion?.buildId || null,
      ramping: routing?.rampingDeploymentVersion?.buildId || null,
      rampingPercentage: routing?.rampingVersionPercentage ?? 0,
      versions: (info?.versionSummaries ?? []).map((v) => ({
        buildId: v.deploymentVersion?.buildId ?? '',
        status: statusName(v.status),
      })),
    };
  } catch (err) {
    if ((err as { code?: number }).code === GRPC_NOT_FOUND) return null;
    throw err;
  }
}

/**
 * Makes `buildId` (null: the unversioned workers) the deployment's Current Version: new workflows and
 * every auto-upgrading one go to it from their next task, pinned ones stay where they are
 * (docs/decisions/0386-worker-deployment-versions.md). The server refuses a version no worker of which
 * has polled every task queue of the one it replaces yet: that is waited for, up to `withinMs`.
 */
export async function setCurrentVersion(
  connection: Connection,
  namespace: string,
  deploymentName: string,
  buildId: string | null,
  withinMs = 120_000,
): Promise<void> {
  await untilAccepted(
    `set ${deploymentName}'s Current Version to ${buildId ?? 'the unversioned workers'}`,
    withinMs,
    () =>
      connection.workflowService.setWorkerDeploymentCurrentVersion({
        namespace,
        deploymentName,
        ...(buildId ? { buildId } : { version: UNVERSIONED }),
        identity: 'tranche worker-version',
      }),
  );
}

/**
 * Sends `percentage` of new workflows, and of the auto-upgrading ones (chosen by workflow id), to `buildId`
 * beside the Current Version; making it Current ends the ramp.
 */
export async function setRampingVersion(
  connection: Connection,
  namespace: string,
  deploymentName: string,
  buildId: string,
  percentage: number,
  withinMs = 120_000,
): Promise<void> {
  await untilAccepted(`ramp ${deploymentName} to ${buildId} at ${percentage}%`, withinMs, () =>
    connection.workflowService.setWorkerDeploymentRampingVersion({
      namespace,
      deploymentName,
      buildId,
      percentage,
      identity: 'tranche worker-version',
    }),
  );
}

/** `npm start`, `npm run cluster` and compose: this build's version Current, once its workers poll. */
export async function promote(
  connection: Connection,
  namespace: string,
  version: DeploymentVersion,
  withinMs?: number,
) {
  const routing = await deploymentRouting(connection, namespace, version.deploymentName);
  if (routing?.current === version.buildId && !routing.ramping) return { changed: false, previous: routing.current };
  await setCurrentVersion(connection, namespace, version.deploymentName, version.buildId, withinMs);
  return { changed: true, previous: routing?.current ?? null };
}

/**
 * Tries a routing change until the server takes it: a version its workers have not polled with yet
 * (NOT_FOUND, FAILED_PRECONDITION) or a change still in flight is tried again every half second.
 */
async function untilAccepted(what: string, withinMs: number, call: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      await call();
      return;
    } catch (err) {
      const code = (err as { code?: number }).code;
      const retry = code === GRPC_NOT_FOUND || code === GRPC_FAILED_PRECONDITION || /in progress/i.test(String(err));
      if (!retry || Date.now() > deadline)
        throw new Error(`could not ${what} within ${withinMs / 1000} s: ${(err as Error).message}`, { cause: err });
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/**
 * `npm start` and `npm run cluster`: the version the workers started with `env` poll as, made Current once
 * they poll; nothing when they poll unversioned. Answers the version, or null.
 */
export async function promoteWhenVersioned(
  temporalAddress: string,
  env: NodeJS.ProcessEnv,
): Promise<DeploymentVersion | null> {
  const config = ConfigSchema.pick({
    NODE_ENV: true,
    TEMPORAL_NAMESPACE: true,
    TRANCHE_BUILD_ID: true,
    WORKER_DEPLOYMENT_NAME: true,
    WORKER_VERSIONING: true,
  }).parse(env);
  const version = deploymentVersionOf(config);
  if (!version) return null;
  const connection = await Connection.connect({ address: temporalAddress, connectTimeout: '10s' });
  try {
    await promote(connection, config.TEMPORAL_NAMESPACE, version);
  } finally {
    await connection.close();
  }
  return version;
}
