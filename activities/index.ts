import type { Orm } from '../db/orm';
import type { PaymentProcessor } from '../domain/payment-processor';
import type { EventDispatcher } from './event-dispatcher';
import { createPaymentActivities } from './payments';
import { createProjectionActivities } from './subscription-projection';

export interface ActivityDeps {
  orm: Orm;
  processor: PaymentProcessor;
  dispatcher: EventDispatcher;
}

/** Every activity the worker registers, built from its dependencies (tests hand in real ones). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createProjectionActivities(deps),
    ...createPaymentActivities(deps.processor),
  };
}

export type Activities = ReturnType<typeof createActivities>;
