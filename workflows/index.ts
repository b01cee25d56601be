// Every workflow the worker runs. Workflow code is deterministic: no I/O, clock, random or env.
import type { VersioningBehavior } from '@temporalio/common';
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { subscriptionWorkflow } from './subscription';
import { retrySchedulerWorkflow } from './retry-scheduler';
import { webhookDeliveryWorkflow } from './webhook-delivery';
import { webhookRecoveryWorkflow } from './webhook-recovery';
import { orderedDeliveryWorkflow } from './ordered-delivery';
import { retentionPruneWorkflow } from './retention-prune';
import { auditCheckpointWorkflow } from './audit-checkpoint';
import { commitmentSweepWorkflow } from './commitment-sweep';

/*
 * Each type's Worker Versioning behaviour (docs/decisions/0387-versioning-behaviour-per-workflow.md). It
 * changes no command: histories replay the same with or without it.
 * AUTO_UPGRADE: the run moves to each new Current version at its next task, so every change to what it
 * does goes behind patched() (workflows/subscription-run.ts) and replays the histories older builds
 * recorded (test/replay/). Subscriptions live weeks; the scheduler, the ordered sequencer and the audit
 * checkpoint live as long as the service, carried across continue-as-new.
 * PINNED: the run ends on the build that started it, which keeps polling until its pinned runs have
 * drained. A delivery ends within the retry schedule's 8 attempts (spec §6.5, at most about 36 hours),
 * a recovery within its pages, a retention prune and a commitment sweep within minutes.
 */
setWorkflowOptions(onVersioned('AUTO_UPGRADE'), subscriptionWorkflow);
setWorkflowOptions(onVersioned('AUTO_UPGRADE'), retrySchedulerWorkflow);
setWorkflowOptions(onVersioned('AUTO_UPGRADE'), orderedDeliveryWorkflow);
setWorkflowOptions(onVersioned('AUTO_UPGRADE'), auditCheckpointWorkflow);
setWorkflowOptions(onVersioned('PINNED'), webhookDeliveryWorkflow);
setWorkflowOptions(onVersioned('PINNED'), webhookRecoveryWorkflow);
setWorkflowOptions(onVersioned('PINNED'), retentionPruneWorkflow);
setWorkflowOptions(onVersioned('PINNED'), commitmentSweepWorkflow);

/**
 * The behaviour, stated only when the run's tasks are a versioned worker's: the server refuses every workflow
 * task an unversioned worker completes with a behaviour ("versioning behavior cannot be specified without
 * deployment options"), and the tests' workers, and WORKER_VERSIONING=false, poll unversioned (their tasks carry
 * a build id but no deployment name). Asked once, at the run's first activation on a worker, which names a
 * deployment for a run a versioned worker began; a run begun unversioned and replayed on a versioned worker takes
 * that worker's default (AUTO_UPGRADE, worker/create-worker.ts).
 */
function onVersioned(versioningBehavior: VersioningBehavior) {
  return () => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior } : {});
}

export {
  subscriptionWorkflow,
  retrySchedulerWorkflow,
  webhookDeliveryWorkflow,
  webhookRecoveryWorkflow,
  orderedDeliveryWorkflow,
  retentionPruneWorkflow,
  auditCheckpointWorkflow,
  commitmentSweepWorkflow,
};
