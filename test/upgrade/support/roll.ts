import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { setCurrentVersion, setRampingVersion } from '../../../scripts/lib/version-routing';
import { until } from '../../support/wait';
import type { Build } from './builds';
import type { ServiceGroup } from './service-group';
import { listRuns } from './workflow-tasks';

const { VersioningBehavior, WorkflowExecutionStatus } = temporal.api.enums.v1;

/** What the roll did, step by step, for the report. */
export type RollLog = string[];

/**
 * Replaces a group's workers and API instances of one build with `to`, one worker and one API instance at a
 * time, as an operator deploys (docs/operators/upgrades.md, "Deploying a new build"): a worker of the new build starts beside
 * the old ones; once it polls, the new version is ramped to half, then made Current (or, back to an
 * unversioned build, the unversioned workers are); an old worker stops (it finishes what it holds); an API
 * instance is replaced on its port while the balancer sends to the other; and so on. The last worker of the
 * old build stops only once no run is pinned to it any more.
 */
export async function roll(o: {
  group: ServiceGroup;
  to: Build;
  temporalAddress: string;
  namespace: string;
  log: RollLog;
}): Promise<void> {
  const { group, to } = o;
  const say = (what: string) => o.log.push(`${new Date().toISOString()} ${group.set}: ${what}`);
  const old = group.workers.filter((w) => w.build !== to);
  const from = old[0]?.build;
  const connection = await Connection.connect({ address: o.temporalAddress });
  try {
    for (const [i, leaving] of old.entries()) {
      await group.addWorker(to);
      say(`worker of the ${to.name} build started`);
      if (i === 0) await route(connection, o.namespace, group, to, say);
      if (i === old.length - 1 && from?.versioned) await drained(connection, o.namespace, group, from, say);
      await group.removeWorker(leaving);
      say(`worker of the ${leaving.build.name} build stopped`);
      if (group.apis[i]) {
        await group.replaceApi(i, to);
        say(`API instance ${i + 1} replaced by the ${to.name} build`);
      }
    }
    for (let i = old.length; i < group.apis.length; i++) {
      await group.replaceApi(i, to);
      say(`API instance ${i + 1} replaced by the ${to.name} build`);
    }
  } finally {
    await connection.close();
  }
}

/** New and auto-upgrading runs go to `to`: ramped to half first when it is versioned, then Current. */
async function route(connection: Connection, ns: string, group: ServiceGroup, to: Build, say: (s: string) => void) {
  if (!to.versioned) {
    await setCurrentVersion(connection, ns, group.deploymentName, null);
    return say('Current Version set to the unversioned workers');
  }
  await setRampingVersion(connection, ns, group.deploymentName, to.buildId, 50);
  say(`${to.buildId} ramping at 50%`);
  // Half of what starts meanwhile goes to each build, under the traffic.
  await new Promise((r) => setTimeout(r, 5000));
  await setCurrentVersion(connection, ns, group.deploymentName, to.buildId);
  say(`${to.buildId} Current`);
}

/** Waits until no open run of the group is pinned to `build` (its deliveries ended, or moved on). */
async function drained(
  connection: Connection,
  ns: string,
  group: ServiceGroup,
  build: Build,
  say: (s: string) => void,
) {
  const pinned = async () => {
    let n = 0;
    const query = `TaskQueue = '${group.taskQueue}' AND ExecutionStatus = 'Running'`;
    for await (const w of listRuns(connection, query, ns)) {
      const raw = await connection.workflowService.describeWorkflowExecution({
        namespace: ns,
        execution: { workflowId: w.workflowId, runId: w.runId },
      });
      const v = raw.workflowExecutionInfo?.versioningInfo;
      if (raw.workflowExecutionInfo?.status !== WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING) continue;
      if (
        v?.behavior === VersioningBehavior.VERSIONING_BEHAVIOR_PINNED &&
        v.deploymentVersion?.buildId === build.buildId
      )
        n++;
    }
    return n;
  };
  const at = await pinned();
  say(`${at} runs pinned to ${build.buildId}; waiting for them to end`);
  await until(`no run pinned to ${build.buildId}`, pinned, (n) => n === 0, { timeoutMs: 600_000, intervalMs: 2000 });
  say(`${build.buildId} drained`);
}
