/**
 * The one publish path's Temporal half (spec §6.1): per event, record a delivery for every
 * matching endpoint and start one delivery workflow each, abandoned so the fan-out ends at once
 * and pays no child-completed writes.
 */
import { ParentClosePolicy, proxyLocalActivities, startChild, WorkflowIdReusePolicy } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import { deliveryWorkflowId } from './webhook-messages';
import { webhookDeliveryWorkflow } from './webhook-delivery';

const { planFanout } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '20s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '30s' },
});

export async function eventFanoutWorkflow(eventId: string): Promise<{ deliveries: number }> {
  const { deliveryIds } = await planFanout(eventId);
  // All start commands go out in one workflow task.
  await Promise.all(
    deliveryIds.map((deliveryId) =>
      startChild(webhookDeliveryWorkflow, {
        workflowId: deliveryWorkflowId(deliveryId),
        args: [{ deliveryId }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // A delivery that already ran (an earlier fan-out of this event) is not run again.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      }).catch((err) => {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }),
    ),
  );
  return { deliveries: deliveryIds.length };
}
