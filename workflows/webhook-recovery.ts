/**
 * Bulk recovery of one endpoint (docs/decisions/0167-bulk-recovery.md): retry every failed or exhausted delivery in the
 * window, a page per activity call, until none is left or the API asks it to stop. The cursor
 * and progress live in the recovery's row (activities/webhook-recovery.ts), so the workflow holds
 * nothing but the id, survives any worker restart, and starts afresh every 100 pages to keep its
 * history short (100k deliveries are 500 pages of 200).
 */
import { allHandlersFinished, condition, continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { retryPolicy } from '../domain/activity-failures';

const PAGES_PER_RUN = 100;

const { recoverBatch } = proxyActivities<Activities>({
  startToCloseTimeout: '15m',
  // Heartbeats come after every chunk of retries: a worker that died is noticed within a minute.
  heartbeatTimeout: '1m',
  retry: retryPolicy({ initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' }),
});

export async function webhookRecoveryWorkflow(recoveryId: string): Promise<'finished'> {
  for (let page = 0; page < PAGES_PER_RUN; page++) {
    if ((await recoverBatch(recoveryId)).finished) return 'finished';
  }
  await condition(allHandlersFinished);
  return continueAsNew<typeof webhookRecoveryWorkflow>(recoveryId);
}
