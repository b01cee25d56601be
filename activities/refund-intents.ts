import { ApplicationFailure } from '@temporalio/common';
import type { Orm } from '../db/orm';
import { IntentAmountInvalid, recordIntent, settleIntent } from '../db/refund-intents';
import type { RefundIntent, RefundIntentOutcome } from '../domain/refund-intents';

/**
 * The subscription workflow's record of a refund before and after the processor is called
 * (docs/decisions/0374-refund-intents.md). Thin: the table is db/refund-intents.ts's.
 */
export function createRefundIntentActivities(deps: { orm: Orm }) {
  const knex = () => deps.orm.em.getConnection().getKnex();
  return {
    async recordRefundIntent(intent: RefundIntent): Promise<void> {
      try {
        await recordIntent(knex(), intent);
      } catch (err) {
        // An amount the table cannot hold will not become one on a retry; nothing was sent.
        if (err instanceof IntentAmountInvalid) throw ApplicationFailure.nonRetryable(err.message, 'INVALID_AMOUNT');
        throw err;
      }
    },
    async settleRefundIntent(outcome: RefundIntentOutcome): Promise<void> {
      await settleIntent(knex(), outcome);
    },
  };
}
