import type { Client } from '@temporalio/client';
import type { DeploymentVersion } from '../lib/runtime/build-id';
import { logger } from '../lib/runtime/logger';

/** How often a versioned worker reads its deployment's routing. */
const EVERY_MS = 5000;

/** Whether new workflows may be routed to a version, from a deployment's routing. */
export interface Routing {
  /** True while this worker's version is Current or Ramping; always, unversioned. */
  routedHere(): boolean;
  stop(): void;
}

/**
 * Follows whether this worker's version is one new workflows go to (Current or Ramping). The delivery
 * engine asks for a delivery workflow's first task back in its start's answer (docs/decisions/0331): that
 * task runs here whatever the routing says, and a PINNED delivery then stays on this build. From a version
 * no longer Current (a deploy's old workers, draining), such starts would keep pinning new deliveries to it,
 * which would never drain; from one not yet Current, they would run before the operator ramps it. So eager
 * starts wait for this to say yes; the rest are queued and routed by the server
 * (docs/decisions/0387-versioning-behaviour-per-workflow.md). It starts as no, and a failed read keeps the
 * last answer.
 */
export function followRouting(client: Client, namespace: string, version: DeploymentVersion | null): Routing {
  if (!version) return { routedHere: () => true, stop: () => undefined };
  let here = false;
  let stopped = false;
  const read = async () => {
    try {
      const { workerDeploymentInfo } = await client.withDeadline(Date.now() + EVERY_MS, () =>
        client.workflowService.describeWorkerDeployment({ namespace, deploymentName: version.deploymentName }),
      );
      const routing = workerDeploymentInfo?.routingConfig;
      const ramping = routing?.rampingDeploymentVersion?.buildId === version.buildId;
      const next = routing?.currentDeploymentVersion?.buildId === version.buildId || ramping;
      if (next !== here) logger.info({ version, routedHere: next }, 'worker deployment routing changed');
      here = next;
    } catch (err) {
      // NOT_FOUND until a worker of the deployment has polled: nothing is routed here yet.
      if ((err as { code?: number }).code === 5) here = false;
      else logger.warn({ err }, 'worker deployment routing not read; keeping the last answer');
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const loop = () => {
    void read().finally(() => {
      if (!stopped) timer = setTimeout(loop, EVERY_MS).unref();
    });
  };
  loop();
  return {
    routedHere: () => here,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
