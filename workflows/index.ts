// Every workflow the worker runs. Workflow code is deterministic: no I/O, clock, random or env.
import { setWorkflowOptions } from '@temporalio/workflow';
import { subscriptionWorkflow } from './subscription';
import { retrySchedulerWorkflow } from './retry-scheduler';
import { webhookDeliveryWorkflow } from './webhook-delivery';
import { webhookRecoveryWorkflow } from './webhook-recovery';
import { orderedDeliveryWorkflow } from './ordered-delivery';
import { retentionPruneWorkflow } from './retention-prune';
import { auditCheckpointWorkflow } from './audit-checkpoint';

/*
 * Each type's Worker Versioning behaviour (docs/decisions/0387-versioning-behaviour-per-workflow.md). It
 * changes no command: histories replay the same with or without it.
 * AUTO_UPGRADE: the run moves to each new Current version at its next task, so every change to what it
 * does goes behind patched() (workflows/subscription-run.ts) and replays the histories older builds
 * recorded (test/replay/). Subscriptions live weeks; the scheduler, the ordered sequencer and the audit
 * checkpoint live as long as the service, carried across continue-as-new.
 * PINNED: the run ends on the build that started it, which keeps polling until its pinned runs have
 * drained. A delivery ends within the retry schedule's 8 attempts (spec §6.5, at most about 36 hours),
 * a recovery within its pages, a retention prune within minutes.
 */
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, subscriptionWorkflow);
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, retrySchedulerWorkflow);
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, orderedDeliveryWorkflow);
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, auditCheckpointWorkflow);
setWorkflowOptions({ versioningBehavior: 'PINNED' }, webhookDeliveryWorkflow);
setWorkflowOptions({ versioningBehavior: 'PINNED' }, webhookRecoveryWorkflow);
setWorkflowOptions({ versioningBehavior: 'PINNED' }, retentionPruneWorkflow);

export {
  subscriptionWorkflow,
  retrySchedulerWorkflow,
  webhookDeliveryWorkflow,
  webhookRecoveryWorkflow,
  orderedDeliveryWorkflow,
  retentionPruneWorkflow,
  auditCheckpointWorkflow,
};
