import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Knex } from '@mikro-orm/postgresql';
import type { Config } from '../lib/runtime/config';
import { auditTrailHasEntries } from '../db/audit-checkpoint';
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
 * so several workers starting at once still make one workflow. A fresh workflow (after someone
 * terminated the last) starts from the latest memo of the one before, and carries it in its own memo
 * from its start. When Temporal has no such workflow at all (deleted, its namespace's retention over,
 * its data lost) while the trail holds entries, none is started: a fresh checkpoint would vouch for
 * whatever the database holds now (docs/decisions/0380-audit-checkpoint-gone-is-seen.md). The
 * worker logs the refusal and runs on; audit:verify names the missing checkpoint.
 */
export async function ensureAuditCheckpoints(client: Client, config: CheckpointConfig, knex: Knex): Promise<void> {
  const workflowId = auditCheckpointWorkflowId(config.TEMPORAL_TASK_QUEUE);
  const found = await describedCheckpoint(client, config);
  // A running workflow is only signalled; a start from nothing signs whatever the database holds.
  const fromNothing = found === 'none' || (!found.running && found.checkpoint === null);
  if (fromNothing && (await auditTrailHasEntries(knex)))
    throw new Error(
      `no audit checkpoint at workflow ${workflowId}, though the audit trail holds entries: the workflow was deleted ` +
        "(or its last run left none, or Temporal's data was lost), and a fresh checkpoint would vouch for whatever " +
        'the database now holds, so none is started. If that was deliberate (a restore, a new Temporal), start one ' +
        'over the present heads as docs/decisions/0380-audit-checkpoint-gone-is-seen.md says',
    );
  const previous = found === 'none' ? null : found.checkpoint;
  const run: AuditCheckpointRun = { previous, everySeconds: config.AUDIT_CHECKPOINT_INTERVAL_SECONDS };
  await client.workflow.signalWithStart(AUDIT_CHECKPOINT_WORKFLOW, {
    workflowId,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    args: [run],
    signal: AUDIT_CHECKPOINT_NOW,
    signalArgs: [],
    // Terminated before its first round, a run still leaves the checkpoint it was started from.
    ...(previous && { memo: { [AUDIT_CHECKPOINT_MEMO]: previous } }),
  });
}

/** The workflow's newest run: whether it runs, and its memo's checkpoint (null: none yet); or 'none': no such workflow. */
async function describedCheckpoint(
  client: Client,
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>,
): Promise<{ running: boolean; checkpoint: AuditCheckpoint | null } | 'none'> {
  try {
    const described = await client.workflow.getHandle(auditCheckpointWorkflowId(config.TEMPORAL_TASK_QUEUE)).describe();
    return {
      running: described.status.name === 'RUNNING',
      checkpoint: (described.memo?.[AUDIT_CHECKPOINT_MEMO] as AuditCheckpoint | undefined) ?? null,
    };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'none';
    throw err;
  }
}

/**
 * The latest checkpoint, from the workflow's memo (its newest run, running or not): no worker
 * needs to run to read it. Null when there has never been one (or Temporal has forgotten it: the
 * namespace's retention ended a workflow closed long ago, or someone deleted it).
 */
export async function latestAuditCheckpoint(
  client: Client,
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>,
): Promise<AuditCheckpoint | null> {
  const latest = await describedCheckpoint(client, config);
  return latest === 'none' ? null : latest.checkpoint;
}
