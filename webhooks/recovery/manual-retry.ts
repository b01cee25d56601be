import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { WebhookDeliveryRow } from '../../db/entities/webhook-rows';
import { conflict, unavailable } from '../../lib/errors';
import {
  deliveryPriority,
  deliveryWorkflowId,
  DELIVERY_WORKFLOW,
  retryNow,
  type DeliveryInput,
} from '../../domain/webhook-messages';
import { WebhookDeliveryStatusKey, WebhookEndpointIdKey, WebhookEventTypeKey } from '../../domain/search-attributes';
import { signalDelivery } from '../deliveries/delivery-signal';

/** Runs met closing between a refused start and its signal before a retry gives up (each is rare). */
const RACES_MET = 3;

/** What a retry reads: the delivery again (its schedule may have ended meanwhile) and its endpoint. */
export interface DeliveryLookup {
  get(orgId: string, id: string): Promise<WebhookDeliveryRow>;
  endpointState(endpointId: string): Promise<'enabled' | 'disabled' | 'deleted'>;
  /** The highest attempt number taken, results or not: an attempt in flight is counted once it is recorded. */
  lastAttemptNumber(deliveryId: string): Promise<number>;
}

/**
 * Manual retry (spec §4.3, §2.7): a `failed` delivery attempts now and its schedule goes on; an
 * `exhausted` one gets one more attempt, numbered after the last, in a new run of the same
 * delivery workflow (same event_id and delivery id); a `pending` one (its first attempt stuck:
 * never handed over, or its batch lost) attempts now and follows the schedule; `success` is refused.
 * Should the batch make its first attempt after all, it finds the number taken, or its start of
 * the delivery workflow refused: the consumer may see the attempt twice (spec §6.1), never fewer.
 * The manual retry route and bulk recovery (activities/webhook-recovery.ts) both retry through here.
 */
export async function retryDelivery(
  deps: { temporal: Client; taskQueue: string; reads: DeliveryLookup },
  delivery: WebhookDeliveryRow,
): Promise<void> {
  refuseUnlessRetryable(delivery);
  const endpoint = await deps.reads.endpointState(delivery.endpoint_id);
  if (endpoint === 'deleted')
    throw conflict('ENDPOINT_DELETED', 'The endpoint of this delivery was deleted; nothing more is sent to it');
  if (endpoint === 'disabled')
    throw conflict('ENDPOINT_DISABLED', 'The endpoint of this delivery is disabled; re-enable it with PATCH first');
  if (delivery.status === 'failed') {
    if (await signalDelivery(deps.temporal, delivery.id, retryNow)) return;
    // The schedule ended meanwhile (a success or the 8th failure): decide again on what it left.
    delivery = await deps.reads.get(delivery.org_id, delivery.id);
    refuseUnlessRetryable(delivery);
  }
  // An attempt still in flight (or lost with its worker) holds its number before its result counts.
  const attemptsMade = Math.max(delivery.attempt_count, await deps.reads.lastAttemptNumber(delivery.id));
  const input: DeliveryInput =
    delivery.status === 'exhausted'
      ? { deliveryId: delivery.id, attemptsMade, once: true, statusShown: true }
      : { deliveryId: delivery.id, attemptsMade, attemptNow: true, statusShown: true }; // no run waiting: attempt now, then the schedule
  // A run still open (closing after its last attempt, or another retry) takes the request by signal;
  // one that closes between the refused start and the signal leaves the way to a new start.
  for (let tries = 1; ; tries++) {
    try {
      await deps.temporal.workflow.start<(input: DeliveryInput) => Promise<unknown>>(DELIVERY_WORKFLOW, {
        taskQueue: deps.taskQueue,
        workflowId: deliveryWorkflowId(delivery.id),
        args: [input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        typedSearchAttributes: [
          { key: WebhookEndpointIdKey, value: delivery.endpoint_id },
          { key: WebhookEventTypeKey, value: delivery.event_type },
          { key: WebhookDeliveryStatusKey, value: delivery.status },
        ],
        priority: deliveryPriority(delivery.org_id),
      });
      return;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    if (await signalDelivery(deps.temporal, delivery.id, retryNow)) return;
    if (tries === RACES_MET) throw unavailable('The delivery changed while it was being retried; try again');
  }
}

function refuseUnlessRetryable(d: WebhookDeliveryRow): void {
  if (d.status === 'success')
    throw conflict('DELIVERY_SUCCEEDED', 'This delivery already succeeded; there is nothing to retry');
}
