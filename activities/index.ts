import type { Orm } from '../db/orm';
import type { Config } from '../lib/runtime/config';
import type { PaymentProcessor } from '../domain/payment-processor';
import type { DeliveryEngine } from '../webhooks';
import { createPaymentActivities } from './payments';
import { createProjectionActivities } from './subscription-projection';
import { createAttemptActivities } from './webhook-attempt';
import { createRecoveryActivities } from './webhook-recovery';
import { createRetentionActivities } from './retention';
import { createAuditCheckpointActivities } from './audit-checkpoint';
import { watchedActivities } from './activity-failures';
import { createCommitmentSweepActivities } from './commitment-sweep';
import { createRefundIntentActivities } from './refund-intents';

export interface ActivityDeps {
  orm: Orm;
  processor: PaymentProcessor;
  config: Config;
  /** The process's delivery engine: the delivery workflow's attempts go through it. */
  engine: Pick<DeliveryEngine, 'attempt'>;
}

/**
 * Every activity the worker registers: thin wrappers over the services they call (tests hand in real
 * ones), each failure mapped, counted and, when a subscription's step is stuck, noted
 * (activities/activity-failures.ts).
 */
export function createActivities(deps: ActivityDeps) {
  const activities = {
    ...createProjectionActivities({
      orm: deps.orm,
      set: deps.config.BEHAVIOUR_SET,
      shape: deps.config.WEBHOOK_DELIVERY_SHAPE,
    }),
    ...createPaymentActivities(deps.processor, { pauseAt: deps.config.TEST_PAUSE_AT }),
    ...createRefundIntentActivities({ orm: deps.orm }),
    ...createAttemptActivities(deps.engine),
    ...createRecoveryActivities({
      orm: deps.orm,
      batchSize: deps.config.WEBHOOK_RECOVERY_BATCH_SIZE,
      set: deps.config.BEHAVIOUR_SET,
    }),
    ...createRetentionActivities({ orm: deps.orm, config: deps.config }),
    ...createAuditCheckpointActivities({ orm: deps.orm }),
    ...createCommitmentSweepActivities({ orm: deps.orm, config: deps.config }),
  };
  return watchedActivities(activities, () => deps.orm.em.getConnection().getKnex());
}

export type Activities = ReturnType<typeof createActivities>;
