/**
 * `WEBHOOK_DELIVERY_SHAPE=workflow` (docs/decisions/0298-workflow-shape-parents.md): the deliveries
 * of a subscription's events are children of its workflow from attempt 1, each on the §6.5 schedule's
 * durable timers (workflows/webhook-delivery.ts). Abandoned: a delivery outlives its parent's
 * continue-as-new or close, and a parent never waits on a delivery.
 */
import { ParentClosePolicy, startChild, WorkflowIdReusePolicy } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { WebhookDeliveryStatusKey, WebhookEndpointIdKey, WebhookEventTypeKey } from '../domain/search-attributes';
import { deliveryPriority, deliveryWorkflowId, type ChildDelivery } from '../domain/webhook-messages';
import { webhookDeliveryWorkflow } from './webhook-delivery';

/** Starts each delivery's workflow side by side, in one workflow task's commands; answers once all have started. */
export async function startDeliveryChildren(deliveries: readonly ChildDelivery[]): Promise<void> {
  await Promise.all(deliveries.map(startOne));
}

async function startOne(d: ChildDelivery): Promise<void> {
  try {
    await startChild(webhookDeliveryWorkflow, {
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
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    throw err;
  }
}
