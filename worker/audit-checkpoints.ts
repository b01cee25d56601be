import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Config } from '../lib/runtime/config';
import {
  AUDIT_CHECKPOINT_MEMO,
  AUDIT_CHECKPOINT_NOW,
  AUDIT_CHECKPOINT_WORKFLOW,
  auditCheckpointWorkflowId,
  type AuditCheckpoint,
  type AuditCheckpointRun,
} from '../domain/audit-checkpoint';

type CheckpointConfig = Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'AUDIT_CHECKPOINT_INTERVAL_SECONDS'>;

/**
 * Every worker ensures the audit checkpoint workflow (workflows/audit-checkpoint.ts) at start:
 * started when none runs, else asked for a checkpoint now. Signal-with-start does both in one call,
 * so several workers starting at once still make one workflow. A fresh workflow (the first, or
 * after someone terminated the last) starts from the latest memo of the one before, if any.
 */
export async function ensureAuditCheckpoints(client: Client, config: CheckpointConfig): Promise<void> {
  const run: AuditCheckpointRun = {
    previous: await latestAuditCheckpoint(client, config),
    everySeconds: config.AUDIT_CHECKPOINT_INTERVAL_SECONDS,
  };
  await client.workflow.signalWithStart(AUDIT_CHECKPOINT_WORKFLOW, {
    workflowId: auditCheckpointWorkflowId(config.TEMPORAL_TASK_QUEUE),
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    args: [run],
    signal: AUDIT_CHECKPOINT_NOW,
    signalArgs: [],
  });
}

/**
 * The latest checkpoint, from the workflow's memo (its newest run, running or not): no worker
 * needs to run to read it. Null when there has never been one (or Temporal has forgotten it: the
 * namespace's retention ended a workflow closed long ago).
 */
export async function latestAuditCheckpoint(
  client: Client,
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>,
): Promise<AuditCheckpoint | null> {
  try {
    const described = await client.workflow.getHandle(auditCheckpointWorkflowId(config.TEMPORAL_TASK_QUEUE)).describe();
    return (described.memo?.[AUDIT_CHECKPOINT_MEMO] as AuditCheckpoint | undefined) ?? null;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}
