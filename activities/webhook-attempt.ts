import type { DeliveryEngine } from '../webhooks';

/** The delivery workflow's attempt (workflows/webhook-delivery.ts): the engine's, behind its circuit and rate limit. */
export function createAttemptActivities(engine: Pick<DeliveryEngine, 'attempt'>) {
  return {
    attemptDelivery: engine.attempt,
  };
}
