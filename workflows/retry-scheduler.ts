/**
 * The parent of every delivery waiting on its retry schedule (docs/decisions/0173-dispatcher-engine-shape.md):
 * a long-running workflow per shard takes failed first attempts by signal (the
 * dispatcher's hand-over) and starts each one's delivery workflow as an abandoned child, which then
 * lives on its own durable timers. A success never reaches it: first attempts cost Temporal nothing.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  metricMeter,
  ParentClosePolicy,
  patched,
  setHandler,
  startChild,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { WebhookDeliveryStatusKey, WebhookEndpointIdKey, WebhookEventTypeKey } from '../domain/search-attributes';
import { deliveryWorkflowId, scheduleRetries, type DeliveryInput, type RetryItem } from '../domain/webhook-messages';
import { webhookDeliveryWorkflow } from './webhook-delivery';

/** Children started side by side, in one workflow task's commands. */
const CHILDREN_PER_STEP = 100;
/**
 * Far under the 51,200-event limit: a worker that takes the shard over replays the whole run, and a
 * short run replays in a fraction of the SDK's deadlock limit.
 */
const HISTORY_LIMIT = 2_000;
/**
 * Abandoned children count against a run's 2,000 pending children until they end (days, on the
 * §6.5 schedule); a new run starts from none. An endpoint outage fails thousands at once.
 */
const CHILDREN_PER_RUN = 1000;

interface RetrySchedulerInput {
  shard: number;
  /** Taken but not yet started when the previous run continued as new. */
  queued?: RetryItem[];
}

export async function retrySchedulerWorkflow(input: RetrySchedulerInput): Promise<void> {
  const queue: RetryItem[] = [...(input.queued ?? [])];
  setHandler(scheduleRetries, (batch) => {
    // A malformed signal (poison) is dropped rather than wedging the shard; the sweep re-sends real rows.
    for (const item of Array.isArray(batch?.items) ? batch.items : []) if (wellFormed(item)) queue.push(item);
  });
  let started = 0;
  const rest = () =>
    workflowInfo().continueAsNewSuggested ||
    workflowInfo().historyLength > HISTORY_LIMIT ||
    started >= CHILDREN_PER_RUN;

  for (;;) {
    await condition(() => queue.length > 0 || rest());
    if (rest()) break;
    const step = queue.splice(0, Math.min(CHILDREN_PER_STEP, CHILDREN_PER_RUN - started));
    started += step.length;
    await Promise.all(step.map(startSchedule));
  }
  await condition(allHandlersFinished);
  await continueAsNew<typeof retrySchedulerWorkflow>({ shard: input.shard, queued: queue });
}

/** Starts refused because the delivery's workflow already had an open run (worker metrics, Prometheus). */
const refusedStarts = metricMeter.createCounter(
  'tranche_webhook_retry_start_refused',
  'starts',
  "Retry schedule starts refused because the delivery's workflow had an open run, which holds the schedule",
);

/**
 * The failed delivery's schedule, from attempt 2, in a workflow of its own that outlives this run.
 * A closed run never refuses the start (docs/decisions/0291-every-hand-over-lands.md): a manual
 * retry's run that ended `superseded` before this first attempt failed must not leave it without a
 * schedule. Only an open run refuses, and it holds the schedule; the refusal is logged and counted.
 * Runs recorded before start with REJECT_DUPLICATE, as they did.
 */
async function startSchedule(item: RetryItem): Promise<void> {
  const args: DeliveryInput = { deliveryId: item.deliveryId, attemptsMade: 1, statusShown: true };
  if (item.firstDelayMs !== undefined) args.firstDelayMs = item.firstDelayMs;
  const reuse = patched('retry-start-allow-duplicate')
    ? WorkflowIdReusePolicy.ALLOW_DUPLICATE
    : WorkflowIdReusePolicy.REJECT_DUPLICATE;
  try {
    await startChild(webhookDeliveryWorkflow, {
      workflowId: deliveryWorkflowId(item.deliveryId),
      args: [args],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: reuse,
      typedSearchAttributes: [
        { key: WebhookEndpointIdKey, value: item.endpointId },
        { key: WebhookEventTypeKey, value: item.eventType },
        { key: WebhookDeliveryStatusKey, value: 'failed' },
      ],
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    refusedStarts.add(1);
    log.warn('retry schedule start refused: the delivery workflow has an open run, which holds its schedule', {
      deliveryId: item.deliveryId,
      reusePolicy: reuse,
    });
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function wellFormed(item: RetryItem | undefined): item is RetryItem {
  return (
    typeof item?.deliveryId === 'string' &&
    UUID.test(item.deliveryId) &&
    typeof item.endpointId === 'string' &&
    typeof item.eventType === 'string' &&
    (item.firstDelayMs === undefined || (Number.isSafeInteger(item.firstDelayMs) && item.firstDelayMs >= 0))
  );
}
