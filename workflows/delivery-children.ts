/**
 * `WEBHOOK_DELIVERY_SHAPE=workflow` (docs/decisions/0298-workflow-shape-parents.md): the deliveries
 * of a subscription's events are children of its workflow from attempt 1, each on the §6.5 schedule's
 * durable timers (workflows/webhook-delivery.ts). Abandoned: a delivery outlives its parent's
 * continue-as-new or close, and a parent never waits on a delivery.
 */
import { log, ParentClosePolicy, patched, startChild, WorkflowIdReusePolicy } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { WebhookDeliveryStatusKey, WebhookEndpointIdKey, WebhookEventTypeKey } from '../domain/search-attributes';
import { deliveryPriority, deliveryWorkflowId, type ChildDelivery } from '../domain/webhook-messages';
import { webhookDeliveryWorkflow } from './webhook-delivery';

/**
 * The children a run holds pending at most: half of the 2,000 Temporal allows
 * (`limit.numPendingChildExecutions.error`; past it every workflow task of the run fails). An
 * abandoned child is pending until it ends, days later on the §6.5 schedule; a new run (continue-as-new)
 * holds none (docs/decisions/0367-temporal-limits-kept.md).
 */
const CHILDREN_HELD = 1_000;
/**
 * A command no longer waits for its deliveries' children to start: a thousand starts took the dev
 * server longer than a command's deadline. Runs from before it waited, and replay as they ran.
 */
const STARTS_NOT_AWAITED = 'delivery-children-starts-not-awaited';

/** The delivery children one run started and Temporal has not seen end. */
export class DeliveryChildren {
  private pending = 0;
  /** Starts commanded and not yet answered: a run continues as new only once there are none. */
  private starting = 0;

  /** How many more this run may start now; the projection leaves the rest to the engine. */
  room(): number {
    return Math.max(0, CHILDREN_HELD - this.pending);
  }

  /** True when no start is still on its way (continue-as-new waits for it). */
  settled(): boolean {
    return this.starting === 0;
  }

  /**
   * Starts each delivery's workflow side by side, in one workflow task's commands, which makes them
   * durable. Answers at once; runs from before STARTS_NOT_AWAITED answer once all have started.
   */
  async start(deliveries: readonly ChildDelivery[]): Promise<void> {
    const starts = deliveries.map((d) => this.startOne(d));
    if (!patched(STARTS_NOT_AWAITED)) {
      await Promise.all(starts);
      return;
    }
    for (const started of starts)
      started.catch((err: unknown) => {
        // A start Temporal refused for another reason than a run already there (none is known):
        // its delivery stays pending, seen in the delivery list and this log.
        log.warn('delivery child not started', { error: err instanceof Error ? err.message : String(err) });
      });
  }

  private async startOne(d: ChildDelivery): Promise<void> {
    // Counted from the start command: Temporal counts a child from it too.
    this.pending++;
    this.starting++;
    const ended = () => {
      this.pending--;
    };
    try {
      const child = await startChild(webhookDeliveryWorkflow, {
        workflowId: deliveryWorkflowId(d.deliveryId),
        args: [{ deliveryId: d.deliveryId, statusShown: true }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // A delivery that already has a run (a manual retry came first) is not started twice.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        typedSearchAttributes: [
          { key: WebhookEndpointIdKey, value: d.endpointId },
          { key: WebhookEventTypeKey, value: d.eventType },
          { key: WebhookDeliveryStatusKey, value: 'pending' },
        ],
        // From the recorded answer, so a replay starts the child as it ran: answers recorded before
        // the key existed carry no organisation, and their children start without one
        // (docs/decisions/0325-workflow-shape-fairness-keys.md).
        ...(d.orgId !== undefined && { priority: deliveryPriority(d.orgId) }),
      });
      // Its end reaches this run as an event of its history (no command): the run holds one fewer.
      void child.result().then(ended, ended);
    } catch (err) {
      ended();
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      throw err;
    } finally {
      this.starting--;
    }
  }
}
