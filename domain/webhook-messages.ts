/**
 * Messages, ids and shapes of the delivery engine (spec §6.5), shared by the API, the dispatcher,
 * the activities and the workflows. Imports nothing of the service's own: types flow down.
 */
import type { Priority } from '@temporalio/common';
import { defineSignal } from '@temporalio/workflow';

/** The workflow types the engine starts by name (it never imports workflow code). */
export const DELIVERY_WORKFLOW = 'webhookDeliveryWorkflow';
export const RETRY_SCHEDULER_WORKFLOW = 'retrySchedulerWorkflow';
export const ORDERED_DELIVERY_WORKFLOW = 'orderedDeliveryWorkflow';

/** A delivery workflow per (event, endpoint); the delivery id is derived from both (docs/decisions/0183-delivery-ids-v8.md). */
export const deliveryWorkflowId = (deliveryId: string) => `webhook-delivery-${deliveryId}`;
/**
 * The long-running retry schedulers, one per shard of a task queue (docs/decisions/0173-dispatcher-engine-shape.md):
 * each takes failed first attempts by signal and starts their delivery
 * workflows as its children. The task queue is part of the id, so deployments sharing a namespace
 * never signal each other's schedulers.
 */
export const retrySchedulerWorkflowId = (taskQueue: string, shard: number) =>
  `webhook-retry-scheduler-${taskQueue}-${shard}`;

/** A delivery whose first attempt failed (or was held by an open circuit): its schedule starts at attempt 2. */
export interface RetryItem {
  deliveryId: string;
  endpointId: string;
  eventType: string;
  /** The wait before attempt 2 when attempt 1's Retry-After asked for longer than the schedule's. */
  firstDelayMs?: number;
}
export const scheduleRetries = defineSignal<[{ items: RetryItem[] }]>('scheduleRetries');

/**
 * A delivery whose workflow runs from attempt 1 (`WEBHOOK_DELIVERY_SHAPE=workflow`,
 * docs/decisions/0297-webhook-delivery-shape-as-a-setting.md): what its start needs, the search
 * attributes included.
 */
export interface ChildDelivery {
  deliveryId: string;
  endpointId: string;
  eventType: string;
  /**
   * The delivery's organisation: its workflow's task queue fairness key, so one organisation's
   * burst does not queue another's (docs/decisions/0325-workflow-shape-fairness-keys.md). Absent in
   * answers recorded before it existed: those children start without a key, as they did.
   */
  orgId?: string;
}

/**
 * A delivery workflow's task queue priority: its organisation is its fairness key, so the task
 * queue hands out each organisation's workflow tasks in turn rather than first come first served,
 * and its attempt activities inherit the key (docs/decisions/0325-workflow-shape-fairness-keys.md).
 */
export const deliveryPriority = (orgId: string): Priority => ({ fairnessKey: orgId });

/** Manual retry of a `failed` delivery: attempt now, then the schedule goes on (spec §4.3). */
export const retryNow = defineSignal('retryNow');
/** The endpoint was deleted: end without further attempts. */
export const endpointDeleted = defineSignal('endpointDeleted');
/**
 * `workflow` shape: a slot of the endpoint (or its organisation) came free while this delivery was
 * held for one; it asks again now rather than at its timer (docs/decisions/0337-held-attempts-woken.md).
 */
export const slotFree = defineSignal('slotFree');

export interface DeliveryInput {
  deliveryId: string;
  /** Attempts already recorded; a manual retry of an exhausted delivery continues the numbering. */
  attemptsMade?: number;
  /** One attempt only (manual retry of an exhausted delivery), then end. */
  once?: boolean;
  /** Make the next attempt at once (a manual retry that found no run waiting), then follow the schedule. */
  attemptNow?: boolean;
  /**
   * The wait before the first attempt this run makes, when the attempt before it (the dispatcher's
   * attempt 1) was answered with a Retry-After longer than the schedule's.
   */
  firstDelayMs?: number;
  /**
   * Attempts as regular activities, not local ones: how `workflow` shape runs were started from
   * docs/decisions/0299-workflow-shape-limits.md until 0334; kept so those runs replay as they ran.
   */
  attemptAsActivity?: boolean;
  /**
   * The run shows its status in its search attribute with no patch marker (every run started since
   * docs/decisions/0334-workflow-shape-attempts-local.md); runs started before decide by the marker.
   */
  statusShown?: boolean;
}

export type DeliveryOutcome =
  'success' | 'failed' | 'exhausted' | 'endpoint_deleted' | 'endpoint_disabled' | 'superseded';

/** A delivery workflow run as an attempt's owner (`AttemptInput.owner`). */
export const runOwner = (runId: string): string => `run:${runId}`;

export interface AttemptInput {
  deliveryId: string;
  number: number;
  /** The workflow's clock when the attempt began: the durable schedule's own time. */
  attemptedAt: string;
  /** Delay before the next automatic attempt if this one fails; null when none follows. */
  nextDelayMs: number | null;
  /**
   * Who makes the attempt (a delivery workflow run, or a batch). The same owner finding its own
   * row again is a replay after a crash; another owner's row means the attempt is someone else's.
   */
  owner: string;
  /** A person asked for it (manual retry, bulk recovery): an open circuit does not hold it back. */
  manual?: boolean;
  /**
   * The start this attempt reserved under its endpoint's rate limit when it was `throttled`
   * (docs/decisions/0293-throttled-retries-sleep.md): it takes no other reservation and waits for
   * no token. Absent: the attempt reserves its start now, or is throttled.
   */
  reservedAt?: string;
}

export interface AttemptResult {
  deliveryId: string;
  /**
   * `superseded`: another run or batch owns this attempt number (a manual retry raced the batch).
   * `endpoint_disabled`: the endpoint is disabled (before this attempt, or by its answer: a 410, or
   * failing too long); no attempt follows.
   * `throttled`: the endpoint's rate limit has no token now; nothing was sent and no attempt number
   * was used: the start at `reservedAt` is this attempt's (absent in results recorded before, which
   * polled instead); sleep `retryAfterMs` until then and attempt with that reservation.
   */
  outcome: 'success' | 'failed' | 'endpoint_deleted' | 'endpoint_disabled' | 'superseded' | 'throttled';
  responseStatus: number | null;
  /**
   * Response headers the schedule may act on later (Retry-After on 429/503; a 410): kept small,
   * lower-case names, only when an answer came.
   */
  responseHeaders: Record<string, string> | null;
  /**
   * The wait a Retry-After on this answer asks for, parsed and capped by the activity (it holds the
   * configured cap and the clock an HTTP-date is read against); absent in results recorded before
   * the endpoint's health. The workflow decides the next delay from it (domain/endpoint-health.ts).
   */
  retryAfterMs?: number | null;
  /** For the delivery workflow's search attributes (Web UI). */
  endpointId: string | null;
  eventType: string | null;
  /**
   * `superseded` because another owner holds this attempt number (the dispatcher's first attempt,
   * raced by a manual retry): a person's attempt takes the next number instead of ending its run
   * (docs/decisions/0291-every-hand-over-lands.md). Absent in results recorded before.
   */
  numberTaken?: boolean;
  /** `throttled`: the start reserved for this attempt under the endpoint's rate limit. */
  reservedAt?: string;
}

/**
 * Ordered delivery (docs/decisions/0172-ordered-delivery.md): one workflow per (endpoint, subscription) takes
 * that subscription's deliveries in outbox order, each through the whole schedule before the next.
 */
export const orderedWorkflowId = (endpointId: string, subscriptionId: string) =>
  `webhook-ordered-${endpointId}-${subscriptionId}`;
export interface OrderedItem {
  deliveryId: string;
  /** The event's outbox sequence: the order one subscription's events were committed in. */
  seq: number;
}
export const deliverInOrder = defineSignal<[{ items: OrderedItem[] }]>('deliverInOrder');
