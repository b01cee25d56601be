/**
 * The commitment sweep (docs/decisions/0371-commitment-sweep.md), started by its Temporal Schedule
 * (worker/commitment-sweep-schedule.ts): gives back capacity held by creates whose workflow never
 * started, then wakes unsigned subscriptions past their lifetime (docs/decisions/0368-unsigned-drafts-expire.md).
 * Each call takes a bounded batch; what is left waits for the next run.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { retryPolicy } from '../domain/activity-failures';
import type { CommitmentSweepResult } from '../domain/commitment-sweep';

const { sweepStrandedCommitments, wakeOverdueDrafts } = proxyActivities<Activities>({
  startToCloseTimeout: '5m',
  // A call heartbeats after every row (each question to Temporal bounded at 5 s).
  heartbeatTimeout: '1m',
  retry: retryPolicy({ initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '2m', maximumAttempts: 5 }),
});

export async function commitmentSweepWorkflow(): Promise<CommitmentSweepResult> {
  const { examined, released } = await sweepStrandedCommitments();
  const draftsWoken = await wakeOverdueDrafts();
  return { examined, released, draftsWoken };
}
