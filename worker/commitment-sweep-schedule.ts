import type { Client } from '@temporalio/client';
import type { Config } from '../lib/runtime/config';
import { COMMITMENT_SWEEP_WORKFLOW, commitmentSweepScheduleId } from '../domain/commitment-sweep';
import { ensureIntervalSchedule } from './interval-schedule';

/**
 * The Temporal Schedule that runs the commitment sweep (workflows/commitment-sweep.ts) every
 * COMMITMENT_SWEEP_INTERVAL_MINUTES (or COMMITMENT_SWEEP_INTERVAL_SECONDS, for a test) on this
 * worker's task queue, ensured by every worker at start (docs/decisions/0371-commitment-sweep.md).
 */
export async function ensureCommitmentSweepSchedule(
  client: Client,
  config: Pick<
    Config,
    'TEMPORAL_TASK_QUEUE' | 'COMMITMENT_SWEEP_INTERVAL_MINUTES' | 'COMMITMENT_SWEEP_INTERVAL_SECONDS'
  >,
): Promise<void> {
  await ensureIntervalSchedule(client, {
    scheduleId: commitmentSweepScheduleId(config.TEMPORAL_TASK_QUEUE),
    workflowType: COMMITMENT_SWEEP_WORKFLOW,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    everyMs: (config.COMMITMENT_SWEEP_INTERVAL_SECONDS ?? config.COMMITMENT_SWEEP_INTERVAL_MINUTES * 60) * 1000,
    what: 'commitment sweep',
  });
}
