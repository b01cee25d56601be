/**
 * The retention prune (docs/decisions/0203-retention-prune-schedule.md), started by its Temporal Schedule
 * (worker/retention-schedule.ts): each group (events with their deliveries and attempts, payment
 * notifications, expired Idempotency-Keys) is pruned oldest first, a few batch statements per activity call,
 * until nothing past its window is left. Progress shows in the Web UI as the memo `retention` after every
 * call; the result holds the rows deleted per table. A long run starts afresh every CALLS_PER_RUN calls,
 * carrying its state, to keep its history short.
 */
import { allHandlersFinished, condition, continueAsNew, proxyActivities, upsertMemo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { retryPolicy } from '../domain/activity-failures';
import { noRowsPruned, RETENTION_STAGES, type RetentionResult, type RetentionRun } from '../domain/retention-messages';

const CALLS_PER_RUN = 200;

const { pruneRetention, recordRetentionRun } = proxyActivities<Activities>({
  startToCloseTimeout: '5m',
  // A call heartbeats after every statement (each bounded by the statement timeout).
  heartbeatTimeout: '1m',
  retry: retryPolicy({ initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '2m', maximumAttempts: 10 }),
});

export async function retentionPruneWorkflow(run?: RetentionRun): Promise<RetentionResult> {
  const state: RetentionRun = run ?? {
    startedAt: new Date().toISOString(),
    stage: 0,
    afterSeq: '0',
    deleted: noRowsPruned(),
    statements: 0,
  };
  for (let calls = 0; state.stage < RETENTION_STAGES.length; calls++) {
    if (calls >= CALLS_PER_RUN) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof retentionPruneWorkflow>(state);
    }
    const progress = await pruneRetention({ stage: RETENTION_STAGES[state.stage]!, afterSeq: state.afterSeq });
    for (const table of Object.keys(state.deleted) as (keyof RetentionRun['deleted'])[])
      state.deleted[table] += progress.deleted[table];
    state.statements += progress.statements;
    state.afterSeq = progress.afterSeq;
    if (progress.done) {
      state.stage++;
      state.afterSeq = '0';
    }
    upsertMemo({ retention: { ...state, stageName: RETENTION_STAGES[state.stage] ?? 'finished' } });
  }
  const result: RetentionResult = {
    startedAt: state.startedAt,
    finishedAt: new Date().toISOString(),
    deleted: state.deleted,
    statements: state.statements,
  };
  await recordRetentionRun(result);
  upsertMemo({ retention: { ...result, stageName: 'finished' } });
  return result;
}
