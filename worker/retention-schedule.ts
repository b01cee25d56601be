import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import type { Config } from '../lib/runtime/config';
import { logger } from '../lib/runtime/logger';
import { RETENTION_WORKFLOW, retentionScheduleId } from '../domain/retention-messages';

/**
 * The Temporal Schedule that runs the retention prune (workflows/retention-prune.ts) every
 * RETENTION_PRUNE_INTERVAL_MINUTES (or RETENTION_PRUNE_INTERVAL_SECONDS, for a soak) on this worker's task queue. Every worker ensures it at start:
 * created when missing, brought to the configured interval and queue when it differs, else left
 * alone. A run still going when the next is due makes that one skip; after an outage one missed
 * run is caught up, not each. Needs no operator rights, only those to start workflows.
 */
export async function ensureRetentionSchedule(
  client: Client,
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'RETENTION_PRUNE_INTERVAL_MINUTES' | 'RETENTION_PRUNE_INTERVAL_SECONDS'>,
): Promise<void> {
  const scheduleId = retentionScheduleId(config.TEMPORAL_TASK_QUEUE);
  const everyMs = (config.RETENTION_PRUNE_INTERVAL_SECONDS ?? config.RETENTION_PRUNE_INTERVAL_MINUTES * 60) * 1000;
  const options: ScheduleOptions = {
    scheduleId,
    spec: { intervals: [{ every: everyMs }] },
    action: {
      type: 'startWorkflow',
      workflowType: RETENTION_WORKFLOW,
      workflowId: scheduleId,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: everyMs },
  };
  try {
    await client.schedule.create(options);
    logger.info({ scheduleId, everySeconds: everyMs / 1000 }, 'retention schedule created');
    return;
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const handle = client.schedule.getHandle(scheduleId);
  const now = await handle.describe();
  const same =
    now.spec.intervals?.length === 1 &&
    now.spec.intervals[0]!.every === everyMs &&
    now.action.workflowType === RETENTION_WORKFLOW &&
    now.action.taskQueue === config.TEMPORAL_TASK_QUEUE;
  if (same) return;
  await handle.update((prev) => ({ ...prev, spec: options.spec, action: options.action, policies: options.policies }));
  logger.info({ scheduleId, everySeconds: everyMs / 1000 }, 'retention schedule updated');
}
