/**
 * One delivery of one event to one endpoint, waiting on its retry schedule (spec §6.5): attempts
 * on durable timers, ending at the first 2xx, after the 8th failure (`exhausted`), or when the
 * endpoint is deleted or disabled. A 429/503's Retry-After may lengthen a wait
 * (docs/decisions/0170-retry-after-wired.md). The retry scheduler starts one per failed first attempt
 * (attemptsMade: 1); the API starts one for a manual retry. Each attempt is a local activity: about 3 history
 * writes. An endpoint's rate limit may make an attempt wait for its turn, reserved for it, on one durable
 * timer; it never costs one of the 8.
 */
import {
  condition,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { WebhookDeliveryStatusKey } from '../domain/search-attributes';
import * as m from '../domain/webhook-messages';
import { ATTEMPT_DELAYS_MS, nextAttemptDelay } from '../domain/retry-schedule';
import { retryPolicy } from '../domain/activity-failures';

const { attemptDelivery } = proxyLocalActivities<Activities>({
  // 30 s for the endpoint (spec §8) plus the database writes.
  startToCloseTimeout: '45s',
  // Only a database failure throws, and it is retried for as long as it lasts (a PostgreSQL outage
  // of any length loses nothing); an HTTP failure is a result and waits for the schedule. A value or
  // row PostgreSQL refuses for good ends the run, seen (domain/activity-failures.ts).
  retry: retryPolicy({ initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' }),
});

/**
 * The same attempt as a regular activity (`attemptAsActivity`): how `workflow` shape runs made their attempts
 * from docs/decisions/0299-workflow-shape-limits.md until 0334, kept so those runs replay as they ran.
 */
const remote = proxyActivities<Activities>({
  startToCloseTimeout: '45s',
  retry: retryPolicy({ initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' }),
});

export async function webhookDeliveryWorkflow(input: m.DeliveryInput): Promise<m.DeliveryOutcome> {
  // From the input, so every replay takes the same path; runs started without it keep the local activity.
  const send = input.attemptAsActivity ? remote.attemptDelivery : attemptDelivery;
  let retryRequested = input.attemptNow ?? false;
  let deleted = false;
  let slotFreed = false;
  setHandler(m.retryNow, () => void (retryRequested = true));
  setHandler(m.endpointDeleted, () => void (deleted = true));
  setHandler(m.slotFree, () => void (slotFreed = true));

  const owner = m.runOwner(workflowInfo().runId);
  let made = input.attemptsMade ?? 0;
  // `manual`: a person asked for this attempt (retry, recovery), so an open circuit does not hold it.
  const attempt = async (nextDelayMs: number | null, manual: boolean) => {
    // The start the endpoint's rate limit reserved for this attempt when it was throttled.
    let reservedAt: string | undefined;
    for (;;) {
      // A wake-up counts from here: one that arrives while this attempt is being held is for this wait.
      slotFreed = false;
      const result = await send({
        deliveryId: input.deliveryId,
        number: made + 1,
        attemptedAt: new Date().toISOString(),
        nextDelayMs,
        owner,
        ...(manual && { manual }),
        ...(reservedAt !== undefined && { reservedAt }),
      });
      const { outcome } = result;
      // The endpoint's rate limit had no token: nothing was sent and the number is still free. The
      // activity reserved this attempt's start: one durable timer until then, and the next call
      // sends at it (docs/decisions/0293-throttled-retries-sleep.md). Results recorded before carry
      // no reservation: those runs polled, and replay as they ran.
      if (outcome === 'throttled') {
        reservedAt = result.reservedAt;
        const waitMs = Math.max(1, result.retryAfterMs ?? 1000);
        // Held for a slot (no reservation): the attempt that frees one wakes it, the timer is the
        // fallback (docs/decisions/0337-held-attempts-woken.md). A reserved start is a time: it sleeps.
        if (reservedAt === undefined) await condition(() => slotFreed, waitMs);
        else await sleep(waitMs);
        continue;
      }
      // A person asked for an attempt now and another owner holds this number (the dispatcher's
      // first attempt, in flight): take the next one, and the schedule goes on from this run, which
      // stays open for the dispatcher's hand-over to find (docs/decisions/0291-every-hand-over-lands.md).
      // Results recorded before carry no numberTaken: their runs replay as they ran.
      if (outcome === 'superseded' && result.numberTaken && manual) {
        made++;
        continue;
      }
      made++;
      showStatus(outcome === 'failed' && nextDelayMs === null ? 'exhausted' : outcome, input.statusShown);
      return { ...result, outcome };
    }
  };

  if (!input.once) {
    // A Retry-After longer than the schedule's delay stretches the wait, from the recorded result
    // (so replay decides the same); the attempt count stays 8.
    let wait = input.firstDelayMs ?? null;
    while (made < ATTEMPT_DELAYS_MS.length) {
      const delay = wait ?? ATTEMPT_DELAYS_MS[made]!;
      if (delay > 0) await condition(() => retryRequested || deleted, delay);
      if (deleted) return 'endpoint_deleted';
      const manual = retryRequested;
      retryRequested = false;
      const result = await attempt(ATTEMPT_DELAYS_MS[made + 1] ?? null, manual);
      if (result.outcome !== 'failed') return result.outcome;
      wait = nextAttemptDelay(ATTEMPT_DELAYS_MS[made] ?? null, result.responseStatus, result.retryAfterMs ?? null);
    }
  }
  // Exhausted; a manual retry (this run's `once`, or a signal that raced the end) gets one more.
  retryRequested ||= Boolean(input.once);
  while (retryRequested && !deleted) {
    retryRequested = false;
    const result = await attempt(null, true);
    if (result.outcome !== 'failed') return result.outcome;
  }
  return deleted ? 'endpoint_deleted' : 'exhausted';
}

/**
 * The delivery's status as a search attribute, for the Web UI. A run started with `statusShown` sets
 * it with no patch marker (a marker costs a history event and an upsert of its own); runs recorded
 * before it existed replay without it.
 */
function showStatus(status: string, shown: boolean | undefined): void {
  if (shown || patched('webhook-delivery-status-attribute'))
    upsertSearchAttributes([{ key: WebhookDeliveryStatusKey, value: status }]);
}
