import type { Client } from '@temporalio/client';
import type { Config } from '../lib/runtime/config';
import { RETENTION_WORKFLOW, retentionScheduleId } from '../domain/retention-messages';
import { ensureIntervalSchedule } from './interval-schedule';

/**
 * The Temporal Schedule that runs the retention prune (workflows/retention-prune.ts) every
 * RETENTION_PRUNE_INTERVAL_MINUTES (or RETENTION_PRUNE_INTERVAL_SECONDS, for a soak) on this worker's
 * task queue, ensured by every worker at start (worker/interval-schedule.ts).
 */
export async function ensureRetentionSchedule(
  client: Client,
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'RETENTION_PRUNE_INTERVAL_MINUTES' | 'RETENTION_PRUNE_INTERVAL_SECONDS'>,
): Promise<void> {
  await ensureIntervalSchedule(client, {
    scheduleId: retentionScheduleId(config.TEMPORAL_TASK_QUEUE),
    workflowType: RETENTION_WORKFLOW,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    everyMs: (config.RETENTION_PRUNE_INTERVAL_SECONDS ?? config.RETENTION_PRUNE_INTERVAL_MINUTES * 60) * 1000,
    what: 'retention',
  });
}
