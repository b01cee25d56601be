import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { logger } from '../lib/runtime/logger';

/**
 * A Temporal Schedule that starts one workflow every `everyMs` on the worker's task queue (the
 * retention prune, the commitment sweep). Every worker ensures it at start: created when missing,
 * brought to the given interval and queue when it differs, else left alone. A run still going when
 * the next is due makes that one skip; after an outage one missed run is caught up, not each. Needs no
 * operator rights, only those to start workflows.
 */
export async function ensureIntervalSchedule(
  client: Client,
  opts: { scheduleId: string; workflowType: string; taskQueue: string; everyMs: number; what: string },
): Promise<void> {
  const { scheduleId, workflowType, taskQueue, everyMs, what } = opts;
  const options: ScheduleOptions = {
    scheduleId,
    spec: { intervals: [{ every: everyMs }] },
    action: { type: 'startWorkflow', workflowType, workflowId: scheduleId, taskQueue, args: [] },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: everyMs },
  };
  try {
    await client.schedule.create(options);
    logger.info({ scheduleId, everySeconds: everyMs / 1000 }, `${what} schedule created`);
    return;
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const handle = client.schedule.getHandle(scheduleId);
  const now = await handle.describe();
  const same =
    now.spec.intervals?.length === 1 &&
    now.spec.intervals[0]!.every === everyMs &&
    now.action.workflowType === workflowType &&
    now.action.taskQueue === taskQueue;
  if (same) return;
  await handle.update((prev) => ({ ...prev, spec: options.spec, action: options.action, policies: options.policies }));
  logger.info({ scheduleId, everySeconds: everyMs / 1000 }, `${what} schedule updated`);
}
