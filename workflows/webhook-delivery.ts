/**
 * One delivery of one event to one endpoint (spec §6.5): attempts on durable timers, ending at the
 * first 2xx, after the 8th failure (`exhausted`), or when the endpoint is deleted. Each attempt is
 * a local activity: about 3 history writes instead of 7 (docs/decisions.md, PERFORMANCE.md).
 */
import { condition, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import * as m from './webhook-messages';

// spec §6.5: delay before attempts 1..8, each counted from the end of the previous attempt.
export const ATTEMPT_DELAYS_MS = [0, 30_000, 120_000, 900_000, 3_600_000, 14_400_000, 43_200_000, 86_400_000] as const;

const { attemptDelivery } = proxyLocalActivities<Activities>({
  // 30 s for the endpoint (spec §8) plus the database write.
  startToCloseTimeout: '45s',
  // Only a database failure throws; an HTTP failure is a result and waits for the schedule.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10 },
});

export async function webhookDeliveryWorkflow(input: m.DeliveryInput): Promise<m.DeliveryOutcome> {
  let retryRequested = input.attemptNow ?? false;
  let deleted = false;
  setHandler(m.retryNow, () => void (retryRequested = true));
  setHandler(m.endpointDeleted, () => void (deleted = true));

  let made = input.attemptsMade ?? 0;
  const attempt = (nextDelayMs: number | null) =>
    attemptDelivery({ deliveryId: input.deliveryId, number: ++made, attemptedAt: new Date().toISOString(), nextDelayMs });

  if (!input.once) {
    while (made < ATTEMPT_DELAYS_MS.length) {
      const delay = ATTEMPT_DELAYS_MS[made]!;
      if (delay > 0) await condition(() => retryRequested || deleted, delay);
      if (deleted) return 'endpoint_deleted';
      retryRequested = false;
      const result = await attempt(ATTEMPT_DELAYS_MS[made + 1] ?? null);
      if (result.outcome !== 'failed') return result.outcome;
    }
  }
  // Exhausted; a manual retry (this run's `once`, or a signal that raced the end) gets one more.
  retryRequested ||= Boolean(input.once);
  while (retryRequested && !deleted) {
    retryRequested = false;
    const result = await attempt(null);
    if (result.outcome !== 'failed') return result.outcome;
  }
  return deleted ? 'endpoint_deleted' : 'exhausted';
}
