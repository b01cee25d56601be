/**
 * Messages and ids of the webhook workflows. The API and the dispatcher import this module, not
 * the workflow code.
 */
import { defineSignal } from '@temporalio/workflow';

/** A fan-out per event: a repeated start for the same event finds the same workflow. */
export const fanoutWorkflowId = (eventId: string) => `event-fanout-${eventId}`;
/** A delivery workflow per (event, endpoint); the delivery id is uuidFromName(event id, endpoint id). */
export const deliveryWorkflowId = (deliveryId: string) => `webhook-delivery-${deliveryId}`;

/** Manual retry of a `failed` delivery: attempt now, then the schedule goes on (spec §4.3). */
export const retryNow = defineSignal('retryNow');
/** The endpoint was deleted: end without further attempts. */
export const endpointDeleted = defineSignal('endpointDeleted');

export interface DeliveryInput {
  deliveryId: string;
  /** Attempts already recorded; a manual retry of an exhausted delivery continues the numbering. */
  attemptsMade?: number;
  /** One attempt only (manual retry of an exhausted delivery), then end. */
  once?: boolean;
  /** Make the next attempt at once (a manual retry that found no run waiting), then follow the schedule. */
  attemptNow?: boolean;
}

export type DeliveryOutcome = 'success' | 'failed' | 'exhausted' | 'endpoint_deleted';

export interface AttemptInput {
  deliveryId: string;
  number: number;
  /** The workflow's clock when the attempt began: the durable schedule's own time. */
  attemptedAt: string;
  /** Delay before the next automatic attempt if this one fails; null when none follows. */
  nextDelayMs: number | null;
}
export interface AttemptResult {
  outcome: 'success' | 'failed' | 'endpoint_deleted';
  responseStatus: number | null;
}
