import {
  isGrpcServiceError,
  ServiceError,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import {
  ApplicationFailure,
  TypedSearchAttributes,
  type SignalDefinition,
  type UpdateDefinition,
} from '@temporalio/common';
import type { Config } from '../../lib/runtime/config';
import { currentIdempotencyScope } from '../../lib/runtime/idempotency-scope';
import { subscriptionWorkflowId, type NewSubscription } from '../../domain/subscription';
import type { SubscriptionView } from '../../domain/subscription-view';
import { OfferingIdKey, SubscriptionStatusKey } from '../../domain/search-attributes';
import { AppError, conflict } from '../../lib/errors';
import { COMMAND_NOT_RECORDED } from '../../domain/activity-failures';
import {
  created,
  paymentNotified,
  SUBSCRIPTION_WORKFLOW,
  type PaymentNotification,
  type SubscriptionWorkflow,
} from '../../domain/subscription-messages';
import type { Projection } from './subscription-reads';

/**
 * The API's only way to talk to subscription workflows. A workflow ends 90 days after its terminal
 * state; past that the projection speaks for it (docs/decisions/0063-after-workflow-closes.md).
 */
export function subscriptionClient(
  temporal: Client,
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'COMMAND_TIMEOUT_MS'>,
  projection: Projection,
) {
  // Longest a command may take end to end (a processor call inside it has its own 30 s limit);
  // past it the API answers 503 COMMAND_OUTCOME_UNKNOWN (api/middleware/error-envelope.ts).
  const withDeadline = <T>(fn: () => Promise<T>, deadline = Date.now() + config.COMMAND_TIMEOUT_MS) =>
    temporal.connection.withDeadline(deadline, fn);
  // Under an Idempotency-Key the update id is derived from it: a retry is the same update, and
  // Temporal answers a completed one with its outcome instead of running it twice.
  const updateId = (name: string) => {
    const scope = currentIdempotencyScope();
    return scope ? `idem-${scope}-${name}` : undefined;
  };

  /**
   * Sends an Update again while Temporal answers that it was never applied (docs/decisions/0367-temporal-limits-kept.md):
   * `UnprocessedUpdate`, when the server took it to the worker in a workflow task that ended before
   * the workflow saw it (a burst of commands on one subscription). All within the one deadline; one
   * refused for the 10 Updates a workflow holds in flight is the 409 SUBSCRIPTION_BUSY, not a 5xx.
   */
  async function untilProcessed<T>(send: (deadline: number) => Promise<T>): Promise<T> {
    const deadline = Date.now() + config.COMMAND_TIMEOUT_MS;
    for (let tries = 1; ; tries++) {
      try {
        return await send(deadline);
      } catch (err) {
        if (inFlightLimit(err)) throw busy();
        if (!unprocessed(err) || Date.now() + UNPROCESSED_PAUSE_MS * tries >= deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, UNPROCESSED_PAUSE_MS * tries));
      }
    }
  }

  /** A command for a closed workflow is refused like any other, with the status it ended in. */
  async function closed(subscriptionId: string, err: unknown): Promise<never> {
    const state = err instanceof WorkflowNotFoundError ? await projection.state(subscriptionId) : null;
    if (!state) throw err;
    throw conflict('SUBSCRIPTION_CLOSED', `The subscription is ${state.status} and closed to commands`, {
      status: state.status,
    });
  }

  return {
    /**
     * Starts the workflow and waits until the subscription is projected, in one call.
     * Returns null when a workflow with this id already ran to its end (an old Idempotency-Key).
     */
    async create(start: NewSubscription): Promise<SubscriptionView | null> {
      const startOp = new WithStartWorkflowOperation<SubscriptionWorkflow>(SUBSCRIPTION_WORKFLOW, {
        workflowId: subscriptionWorkflowId(start.id),
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        args: [{ start }],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: new TypedSearchAttributes([
          { key: SubscriptionStatusKey, value: 'draft' },
          { key: OfferingIdKey, value: start.offeringId },
        ]),
      });
      try {
        return await untilProcessed((deadline) =>
          withDeadline(
            () =>
              temporal.workflow.executeUpdateWithStart(created, {
                args: [{ requestHash: start.requestHash }],
                startWorkflowOperation: startOp,
                updateId: updateId(created.name),
              }),
            deadline,
          ),
        );
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) return null;
        throw err;
      }
    },

    /**
     * True when the workflow answered the create that its first record was refused: it records
     * nothing and ends (docs/decisions/0365-refused-create-ends-its-workflow.md).
     */
    recordedNothing(err: unknown): boolean {
      return (
        err instanceof WorkflowUpdateFailedError &&
        err.cause instanceof ApplicationFailure &&
        err.cause.type === COMMAND_NOT_RECORDED
      );
    },

    /** True only when Temporal says so; false when it cannot tell (an outage). */
    async neverStarted(subscriptionId: string): Promise<boolean> {
      try {
        await withDeadline(() => temporal.workflow.getHandle(subscriptionWorkflowId(subscriptionId)).describe());
        return false;
      } catch (err) {
        return err instanceof WorkflowNotFoundError;
      }
    },

    async command<R, A extends unknown[]>(
      subscriptionId: string,
      update: UpdateDefinition<R, A>,
      ...args: A
    ): Promise<R> {
      const handle = temporal.workflow.getHandle(subscriptionWorkflowId(subscriptionId));
      // The SDK's overloads split on arity; one call site covers both.
      return untilProcessed((deadline) =>
        withDeadline(
          () =>
            handle.executeUpdate(update as unknown as UpdateDefinition<R, [unknown]>, {
              args: args as unknown as [unknown],
              updateId: updateId(update.name),
            }),
          deadline,
        ),
      ).catch((err: unknown) => closed(subscriptionId, err));
    },

    async signal<A extends unknown[]>(subscriptionId: string, signal: SignalDefinition<A>, ...args: A): Promise<void> {
      const handle = temporal.workflow.getHandle(subscriptionWorkflowId(subscriptionId));
      await withDeadline(() => handle.signal(signal, ...args));
    },

    /**
     * A processor notification: to the running workflow, or, when it has closed (a refund or a
     * dispute months later), to the same workflow started again from its projected state.
     */
    async notifyPayment(subscriptionId: string, n: PaymentNotification): Promise<void> {
      const handle = temporal.workflow.getHandle(subscriptionWorkflowId(subscriptionId));
      try {
        await withDeadline(() => handle.signal(paymentNotified, n));
      } catch (err) {
        const state = err instanceof WorkflowNotFoundError ? await projection.state(subscriptionId) : null;
        if (!state) throw err;
        await withDeadline(() =>
          temporal.workflow.signalWithStart<SubscriptionWorkflow, [PaymentNotification]>(SUBSCRIPTION_WORKFLOW, {
            workflowId: subscriptionWorkflowId(subscriptionId),
            taskQueue: config.TEMPORAL_TASK_QUEUE,
            args: [{ resume: state, pendingPayments: [], seenNotifications: [] }],
            signal: paymentNotified,
            signalArgs: [n],
            typedSearchAttributes: new TypedSearchAttributes([
              { key: SubscriptionStatusKey, value: state.status },
              { key: OfferingIdKey, value: state.offeringId },
            ]),
          }),
        );
      }
    },
  };
}

export type SubscriptionClient = ReturnType<typeof subscriptionClient>;

/** The first pause before an Update Temporal did not apply is sent again; each next one is longer by as much. */
const UNPROCESSED_PAUSE_MS = 50;

/** Temporal's answer for an Update that reached no workflow code: nothing was applied. */
function unprocessed(err: unknown): boolean {
  return (
    err instanceof WorkflowUpdateFailedError &&
    err.cause instanceof ApplicationFailure &&
    err.cause.type === 'UnprocessedUpdate'
  );
}

/** RESOURCE_EXHAUSTED (gRPC 8) for the Updates in flight on one workflow, once the SDK's own retries gave up. */
function inFlightLimit(err: unknown): boolean {
  const grpc = err instanceof ServiceError ? err.cause : err;
  return isGrpcServiceError(grpc) && grpc.code === 8 && /update/i.test(grpc.details ?? grpc.message);
}

const busy = () =>
  new AppError(409, 'SUBSCRIPTION_BUSY', 'Too many commands are in progress on this subscription; try again shortly', {
    retry_after_seconds: 1,
  });
