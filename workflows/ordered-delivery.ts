/**
 * Ordered delivery per subscription (docs/decisions/0172-ordered-delivery.md): one workflow per (endpoint,
 * subscription) that asks for it. Deliveries arrive by signal (signalWithStart from the dispatcher, again
 * from the stuck sweep); each runs as a child delivery workflow through the whole §6.5 schedule, and the next
 * starts only when it ended. A failing event holds back its own subscription's later events and no other's:
 * every subscription has its own workflow. Idle for a while, the workflow ends; the next event starts a new
 * one.
 */
import {
  condition,
  continueAsNew,
  executeChild,
  setHandler,
  workflowInfo,
  WorkflowIdReusePolicy,
  allHandlersFinished,
} from '@temporalio/workflow';
import { ChildWorkflowFailure, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { deliverInOrder, deliveryWorkflowId, type OrderedItem } from '../domain/webhook-messages';
import { webhookDeliveryWorkflow } from './webhook-delivery';

/** How long an empty queue waits for the subscription's next event before the workflow ends. */
const IDLE_MS = 10 * 60_000;
/** Deliveries per run before continue-as-new; each costs a handful of history events. */
const PER_RUN = 500;

interface OrderedInput {
  endpointId: string;
  subscriptionId: string;
  /** Taken but not yet delivered when the previous run continued as new. */
  queued?: OrderedItem[];
}

export async function orderedDeliveryWorkflow(input: OrderedInput): Promise<void> {
  const queue: OrderedItem[] = [];
  const known = new Set<string>();
  const take = (items: unknown) => {
    for (const i of Array.isArray(items) ? (items as OrderedItem[]) : []) {
      // Malformed items (poison) are dropped; the stuck sweep re-sends real ones.
      if (typeof i?.deliveryId !== 'string' || typeof i.seq !== 'number' || known.has(i.deliveryId)) continue;
      known.add(i.deliveryId);
      queue.push({ deliveryId: i.deliveryId, seq: i.seq });
    }
    // Hand-overs may reach us out of order (two dispatchers, the sweep): the outbox order decides.
    queue.sort((a, b) => a.seq - b.seq);
  };
  take(input.queued);
  setHandler(deliverInOrder, (batch) => take(batch?.items));

  let done = 0;
  for (;;) {
    if (queue.length === 0 && !(await condition(() => queue.length > 0, IDLE_MS))) break;
    if (done >= PER_RUN || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof orderedDeliveryWorkflow>({ ...input, queued: queue });
    }
    const next = queue.shift()!;
    try {
      // Ends at success, exhaustion, or the endpoint deleted or disabled: then the next goes.
      await executeChild(webhookDeliveryWorkflow, {
        workflowId: deliveryWorkflowId(next.deliveryId),
        args: [{ deliveryId: next.deliveryId, statusShown: true }],
        // A delivery that already ran (a re-sent item) or runs (a manual retry) is not started again.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      });
    } catch (err) {
      // A delivery that failed as a workflow (a bug, a termination) must not stop the others behind it.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError) && !(err instanceof ChildWorkflowFailure)) throw err;
    }
    done++;
  }
  await condition(allHandlersFinished);
}
