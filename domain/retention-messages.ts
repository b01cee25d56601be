/**
 * The retention prune (docs/decisions/0203-retention-prune-schedule.md): its workflow's name and shape, the schedule that starts it, what
 * one statement of a concern and each activity call answer. The worker imports this module, not the
 * workflow code. Which concern prunes what, and where its rules live: activities/retention.ts
 * (docs/decisions/0328-one-home-per-table.md).
 */
export const RETENTION_WORKFLOW = 'retentionPruneWorkflow';

/** One schedule (and one workflow id) per task queue: each deployment on a namespace prunes its own database. */
export const retentionScheduleId = (taskQueue: string) => `retention-prune-${taskQueue}`;

/** The groups pruned, in this order, each oldest first. */
export const RETENTION_STAGES = ['events', 'payment_notifications', 'idempotency_keys'] as const;
export type RetentionStage = (typeof RETENTION_STAGES)[number];

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
  stage: RetentionStage;
  afterSeq: string;
}

/**
 * What one statement of one concern's prune did: rows deleted per table, where the next statement
 * starts (an event `seq`; unchanged for the groups pruned by age alone), and whether nothing past
 * the window is left.
 */
export interface PruneStatement {
  deleted: Partial<RetentionCounts>;
  afterSeq: string;
  done: boolean;
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
