/**
 * First attempts, batched (docs/decisions.md, Delivery engine): a long-running workflow per shard
 * takes batches of delivery ids by signal, makes each batch's first attempts in ONE activity, and
 * starts a delivery workflow only for those that failed. A success costs a share of one activity
 * and two workflow tasks, instead of a workflow per delivery.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
  WorkflowIdReusePolicy,
  log,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import { WebhookDeliveryStatusKey, WebhookEndpointIdKey, WebhookEventTypeKey } from '../domain/search-attributes';
import { nextAttemptDelay } from '../domain/endpoint-health';
import {
  ATTEMPT_DELAYS_MS,
  deliverBatch,
  deliveryWorkflowId,
  type AttemptResult,
  type DeliveryInput,
} from '../domain/webhook-messages';
import { webhookDeliveryWorkflow } from './webhook-delivery';

// A normal activity, not a local one: a batch held up by a slow endpoint (up to 30 s) must not hold
// the workflow task, or no new batch would be taken meanwhile.
const { firstAttempts } = proxyActivities<Activities>({
  startToCloseTimeout: '2m', // 30 s per POST, all side by side, plus two transactions
  heartbeatTimeout: '15s', // a dead worker's batch runs again this soon
  // Unlimited: only the database throws, and a batch replays safely (each attempt names its batch).
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/** Deliveries per activity: bounds the activity's payload and its transactions. */
const MAX_BATCH = 100;
/**
 * Batches in flight at once; more wait in the queue (carried across continue-as-new), so under load
 * batches grow instead of PostgreSQL connections (32 overloaded the pool in the smoke bench).
 */
const MAX_IN_FLIGHT = 8;
/**
 * Far under the 51,200-event limit: a worker that takes over a shard (sticky cache lost, worker
 * restarted) replays the whole run, and replaying ~10,000 events on a loaded machine took longer
 * than the SDK's deadlock limit in the load fault test. A run of 2,000 replays in a fraction.
 */
const HISTORY_LIMIT = 2_000;
/**
 * Abandoned children still count against a run's 2,000 pending children until they end (days, on
 * the §6.5 schedule); a new run starts from none. An endpoint outage fails thousands at once.
 */
const CHILDREN_PER_RUN = 1000;
// Batches in flight when the threshold is crossed may each fail whole: 1,000 + 8 x 100 stays under 2,000.

export interface BatcherInput {
  shard: number;
  /** Deliveries handed over but not yet attempted when the previous run continued as new. */
  queued?: string[];
}

export async function deliveryBatcherWorkflow(input: BatcherInput): Promise<void> {
  const queue: string[] = [...(input.queued ?? [])];
  let inFlight = 0;
  let sequence = 0;
  const children = { started: 0 };
  setHandler(deliverBatch, (batch) => {
    // A malformed signal (poison) is dropped here rather than wedging the batcher; the outbox relay re-sends real ids.
    for (const id of Array.isArray(batch?.deliveryIds) ? batch.deliveryIds : [])
      if (typeof id === 'string' && UUID.test(id)) queue.push(id);
  });
  const rest = () =>
    workflowInfo().continueAsNewSuggested ||
    workflowInfo().historyLength > HISTORY_LIMIT ||
    children.started >= CHILDREN_PER_RUN;

  for (;;) {
    await condition(() => (queue.length > 0 && inFlight < MAX_IN_FLIGHT) || rest());
    if (rest()) break;
    const batchId = `${workflowInfo().runId}/${++sequence}`;
    const ids = queue.splice(0, MAX_BATCH);
    inFlight++;
    void runBatch(ids, batchId, children)
      .catch((err: unknown) => {
        // Only a bug gets here (the activity retries without limit): its deliveries stay `pending`,
        // where the stuck-delivery sweep and a manual retry find them; the batcher goes on.
        log.error('first-attempt batch failed', { batchId, error: String(err) });
      })
      .finally(() => inFlight--);
  }
  await condition(() => inFlight === 0 && allHandlersFinished());
  await continueAsNew<typeof deliveryBatcherWorkflow>({ shard: input.shard, queued: queue });
}

async function runBatch(deliveryIds: string[], batchId: string, children: { started: number }): Promise<void> {
  const results = await firstAttempts({ deliveryIds, batchId, attemptedAt: new Date().toISOString() });
  const failed = results.filter((r) => r.outcome === 'failed');
  children.started += failed.length;
  await Promise.all(failed.map(scheduleRetries));
}

/** The failed delivery's schedule, from attempt 2, in a workflow of its own that outlives the batcher's run. */
async function scheduleRetries(r: AttemptResult): Promise<void> {
  const args: DeliveryInput = { deliveryId: r.deliveryId, attemptsMade: 1 };
  // Attempt 1's Retry-After (429/503) decides the child's first wait; the field is absent otherwise.
  const wait = nextAttemptDelay(ATTEMPT_DELAYS_MS[1], r.responseStatus, r.retryAfterMs ?? null);
  if (wait !== null && wait !== ATTEMPT_DELAYS_MS[1]) args.firstDelayMs = wait;
  try {
    await startChild(webhookDeliveryWorkflow, {
      workflowId: deliveryWorkflowId(r.deliveryId),
      args: [args],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      // A delivery that already has a run (a manual retry) is not started twice.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        { key: WebhookEndpointIdKey, value: r.endpointId ?? '' },
        { key: WebhookEventTypeKey, value: r.eventType ?? '' },
        { key: WebhookDeliveryStatusKey, value: 'failed' },
      ],
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    throw err;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
