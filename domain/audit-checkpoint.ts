/**
 * Audit checkpoints (docs/decisions/0267-audit-checkpoints-in-temporal.md): each organisation's
 * audit head, taken by the worker at least every minute into the history and memo of a Temporal
 * workflow, which lives in Temporal's own database, not the application's. `npm run audit:verify`
 * checks the chain against the latest one. The worker and the script import this module, not the
 * workflow code.
 */
export const AUDIT_CHECKPOINT_WORKFLOW = 'auditCheckpointWorkflow';

/** One workflow per task queue: each deployment on a namespace checkpoints its own database. */
export const auditCheckpointWorkflowId = (taskQueue: string) => `audit-checkpoint-${taskQueue}`;

/** The memo field the latest checkpoint is kept in (readable with no worker running). */
export const AUDIT_CHECKPOINT_MEMO = 'auditCheckpoint';

/** The signal that asks for a checkpoint now (a worker at start, an operator, a test). */
export const AUDIT_CHECKPOINT_NOW = 'auditCheckpointNow';

/** One organisation's head: its newest entry's seq and hash, and its first keyed entry's seq. */
export interface AuditHead {
  orgId: string;
  seq: string;
  hash: string;
  keyedFrom: string | null;
}

/**
 * The heads of every organisation with entries, keyed with the current audit key so a checkpoint
 * forged by whoever can start workflows does not verify. `heldBack` names organisations whose
 * chain no longer reaches their previous head (entries deleted or changed): their head is kept, never
 * moved back, and the worker logs it as an error.
 */
export interface AuditCheckpoint {
  takenAt: string;
  heads: AuditHead[];
  heldBack: string[];
  keyId: string;
  mac: string;
}

export interface AuditCheckpointRun {
  previous: AuditCheckpoint | null;
  everySeconds: number;
}
