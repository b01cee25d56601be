/**
 * The retention prune (docs/decisions/0203-retention-prune-schedule.md): its workflow's name and shape, the
 * schedule that starts it, and what each activity call answers. The worker imports this module, not the
 * workflow code.
 */
export const RETENTION_WORKFLOW = 'retentionPruneWorkflow';

/** One schedule (and one workflow id) per task queue: each deployment on a namespace prunes its own database. */
export const retentionScheduleId = (taskQueue: string) => `retention-prune-${taskQueue}`;

/** The groups pruned, in this order, each oldest first. */
export const RETENTION_STAGES = ['events', 'payment_notifications', 'idempotency_keys'] as const;

/**
 * The tables rows are deleted from, as counted in results and metrics.
 * @internal exported for its tests
 */
export type RetentionTable =
  'events' | 'webhook_deliveries' | 'webhook_attempts' | 'payment_notifications' | 'idempotency_keys';
export type RetentionCounts = Record<RetentionTable, number>;

export const noRowsPruned = (): RetentionCounts => ({
  events: 0,
  webhook_deliveries: 0,
  webhook_attempts: 0,
  payment_notifications: 0,
  idempotency_keys: 0,
});

/** One activity call: which group, and for events where the last call stopped (an event `seq`). */
export interface RetentionStep {
  stage: (typeof RETENTION_STAGES)[number];
  afterSeq: string;
}

/** What one activity call did: rows deleted per table, statements run, where it stopped, whether the group is done. */
export interface RetentionProgress {
  deleted: RetentionCounts;
  statements: number;
  afterSeq: string;
  done: boolean;
}

/** A run's state, carried across continue-as-new; its result once every group is done. */
export interface RetentionRun {
  startedAt: string;
  stage: number;
  afterSeq: string;
  deleted: RetentionCounts;
  statements: number;
}

export interface RetentionResult {
  startedAt: string;
  finishedAt: string;
  deleted: RetentionCounts;
  statements: number;
}
