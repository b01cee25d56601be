import { Context } from '@temporalio/activity';
import type { Orm } from '../db/orm';
import type { BehaviourSet } from '../lib/behaviour-set';
import { recoverPage, type RecoveryStep } from '../webhooks';

/** Bulk recovery's activity (workflows/webhook-recovery.ts): one page, with this activity's client and heartbeat. */
export function createRecoveryActivities(deps: { orm: Orm; batchSize: number; set: BehaviourSet }) {
  return {
    recoverBatch(recoveryId: string): Promise<RecoveryStep> {
      const ctx = Context.current();
      return recoverPage(
        {
          knex: deps.orm.em.getConnection().getKnex(),
          temporal: ctx.client,
          taskQueue: ctx.info.taskQueue,
          batchSize: deps.batchSize,
          set: deps.set,
          heartbeat: () => ctx.heartbeat(),
          cancelled: () => ctx.cancellationSignal.aborted,
        },
        recoveryId,
      );
    },
  };
}
