import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import { deliveryWorkflowId } from '../../domain/webhook-messages';

/** How long one signal to a delivery's workflow may take before it fails (gRPC DEADLINE_EXCEEDED). */
const SIGNAL_TIMEOUT_MS = 5000;

/**
 * Signals a delivery's workflow within SIGNAL_TIMEOUT_MS. Answers false when no run of it is open to
 * take the signal (its schedule ended, or it never had one); any other failure is the caller's.
 */
export async function signalDelivery(
  temporal: Client,
  deliveryId: string,
  signal: SignalDefinition<[]>,
): Promise<boolean> {
  try {
    await temporal.connection.withDeadline(Date.now() + SIGNAL_TIMEOUT_MS, () =>
      temporal.workflow.getHandle(deliveryWorkflowId(deliveryId)).signal(signal),
    );
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
