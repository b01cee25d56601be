/**
 * The one publish path's Temporal half (spec §6.1): per event, record a delivery for every
 * matching endpoint and start one delivery workflow each, abandoned so the fan-out ends at once
 * and pays no child-completed writes. With WEBHOOK_FIRST_ATTEMPT_IN_FANOUT the first attempts run
 * here, side by side, and only the deliveries that failed get a workflow (docs/decisions.md).
 */
import { ParentClosePolicy, proxyLocalActivities, startChild, WorkflowIdReusePolicy } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import { deliveryWorkflowId, type DeliveryInput } from './webhook-messages';
import { ATTEMPT_DELAYS_MS, webhookDeliveryWorkflow } from './webhook-delivery';

const { planFanout } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '20s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '30s' },
});
const { attemptDelivery } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '45s', // as in webhook-delivery.ts: 30 s for the endpoint plus the database
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10 },
});

export async function eventFanoutWorkflow(eventId: string): Promise<{ deliveries: number }> {
  const plan = await planFanout(eventId);
  const toStart: DeliveryInput[] = plan.firstAttemptInFanout
    ? await firstAttempts(plan.deliveryIds)
    : plan.deliveryIds.map((deliveryId) => ({ deliveryId }));
  // All start commands go out in one workflow task.
  await Promise.all(
    toStart.map((input) =>
      startChild(webhookDeliveryWorkflow, {
        workflowId: deliveryWorkflowId(input.deliveryId),
        args: [input],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // A delivery that already ran (an earlier fan-out of this event, a manual retry) is not run again.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      }).catch((err) => {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }),
    ),
  );
  return { deliveries: plan.deliveryIds.length };
}

/** Attempt 1 of every delivery at once; the failed ones continue in their own workflow from attempt 2. */
async function firstAttempts(deliveryIds: string[]): Promise<DeliveryInput[]> {
  const attemptedAt = new Date().toISOString();
  const results = await Promise.all(
    deliveryIds.map((deliveryId) => attemptDelivery({ deliveryId, number: 1, attemptedAt, nextDelayMs: ATTEMPT_DELAYS_MS[1]! })),
  );
  return deliveryIds.filter((_, i) => results[i]!.outcome === 'failed').map((deliveryId) => ({ deliveryId, attemptsMade: 1 }));
}
