/**
 * The audit checkpoint (docs/decisions/0267-audit-checkpoints-in-temporal.md): one long-lived
 * workflow per task queue that takes every organisation's audit head at least every
 * `everySeconds` (AUDIT_CHECKPOINT_INTERVAL_SECONDS, at most 60), or at once when signalled, and
 * keeps the latest in its memo; each round's result also stays in its history, in Temporal's own
 * database. Each round builds on the previous checkpoint, which the run carries across
 * continue-as-new, so a head never moves back.
 */
import {
  allHandlersFinished,
  condition,
  defineSignal,
  makeContinueAsNewFunc,
  proxyActivities,
  setHandler,
  upsertMemo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { retryPolicy } from '../domain/activity-failures';
import {
  AUDIT_CHECKPOINT_MEMO,
  AUDIT_CHECKPOINT_NOW,
  type AuditCheckpoint,
  type AuditCheckpointRun,
} from '../domain/audit-checkpoint';

/** Rounds per run before continue-as-new (about 10 events each): a short history to replay. */
const ROUNDS_PER_RUN = 100;

const { takeAuditCheckpoint } = proxyActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: retryPolicy({ initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '1m' }),
});

const auditCheckpointNow = defineSignal(AUDIT_CHECKPOINT_NOW);

export async function auditCheckpointWorkflow(run: AuditCheckpointRun): Promise<void> {
  let checkpoint: AuditCheckpoint | null = run.previous;
  let asked = false;
  setHandler(auditCheckpointNow, () => {
    asked = true;
  });
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    asked = false;
    checkpoint = await takeAuditCheckpoint(checkpoint);
    upsertMemo({ [AUDIT_CHECKPOINT_MEMO]: checkpoint });
    await condition(() => asked, `${run.everySeconds}s`);
  }
  await condition(allHandlersFinished);
  // The next run starts with the latest checkpoint in its input and its memo.
  const next = makeContinueAsNewFunc<typeof auditCheckpointWorkflow>({
    memo: { [AUDIT_CHECKPOINT_MEMO]: checkpoint },
  });
  return next({ previous: checkpoint, everySeconds: run.everySeconds });
}
