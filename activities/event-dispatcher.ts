import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { logger } from '../lib/logger';
import { fanoutWorkflowId } from '../workflows/webhook-messages';
import type { eventFanoutWorkflow } from '../workflows/event-fanout';

/**
 * Hands freshly stored events to the webhook fan-out right away. It is only the fast path: the
 * outbox relay dispatches anything this misses (a crash between commit and dispatch loses nothing).
 */
export interface EventDispatcher {
  dispatch(eventIds: readonly string[]): Promise<void>;
}

export const relayOnlyDispatcher: EventDispatcher = { dispatch: async () => undefined };

/**
 * Starts one fan-out workflow per event that some endpoint wants, its id derived from the event id: a repeated start for
 * a running fan-out finds it, one for a completed fan-out is refused; only a failed one runs again.
 * Never throws: whatever fails here stays undispatched in the outbox for the relay.
 */
export function temporalDispatcher(client: Client, taskQueue: string, untargeted?: (eventId: string) => Promise<boolean>): EventDispatcher {
  return {
    async dispatch(eventIds) {
      await Promise.all(
        eventIds.map(async (eventId) => {
          try {
            // No endpoint wants it: settled without a workflow (see untargetedEvents).
            if (untargeted && (await untargeted(eventId).catch(() => false))) return;
            await client.workflow.start<typeof eventFanoutWorkflow>('eventFanoutWorkflow', {
              taskQueue,
              workflowId: fanoutWorkflowId(eventId),
              args: [eventId],
              workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
              workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
            });
          } catch (err) {
            if (err instanceof WorkflowExecutionAlreadyStartedError) return;
            logger.warn({ err, eventId }, 'event dispatch failed; the outbox relay will retry');
          }
        }),
      );
    },
  };
}
