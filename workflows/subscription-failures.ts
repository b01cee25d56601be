/**
 * How the subscription workflow tells failures apart: a processor's refusal from an outage, an
 * activity's typed failure from any other. Workflow code: no I/O.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { refusal } from '../domain/refusal';
import { COMMAND_NOT_RECORDED, refusedRecord, type RefusedRecordDetail } from '../domain/activity-failures';

/** True when the failure, or one it wraps (an activity's), is an ApplicationFailure of this type. */
export function failedWith(err: unknown, type: string): boolean {
  for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if (e instanceof ApplicationFailure && e.type === type) return true;
  }
  return false;
}

/** A processor's refusal reaches the investor as 422 with its code; an outage stays an upstream failure. */
export function asRefusal(err: unknown): never {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (cause instanceof ApplicationFailure && cause.nonRetryable) {
    throw refusal(422, cause.type ?? 'PAYMENT_REFUSED', cause.message);
  }
  throw err;
}

export const idempotencyReused = () =>
  refusal(409, 'IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body');

/**
 * The refusal a command gets when the projection refused to record its effect for good (a value or
 * a row PostgreSQL will not store, activities/activity-failures.ts): 422 COMMAND_NOT_RECORDED naming
 * the step and the failure (docs/decisions/0364-refused-records-end-the-command.md). Null for any
 * other failure.
 */
export function notRecorded(err: unknown, step: string, subscriptionId: string): ApplicationFailure | null {
  // A local activity's failure arrives as its ApplicationFailure; a regular one's wrapped in an ActivityFailure.
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (!(cause instanceof ApplicationFailure) || !refusedRecord(cause.type)) return null;
  const detail = (cause.details?.[0] ?? {}) as Partial<RefusedRecordDetail>;
  return refusal(
    422,
    COMMAND_NOT_RECORDED,
    `The command's effect could not be recorded, so nothing changed: ${cause.message}`,
    {
      subscription_id: subscriptionId,
      step,
      failure: cause.type,
      sqlstate: detail.sqlstate ?? null,
      constraint: detail.constraint ?? null,
      table: detail.table ?? null,
      column: detail.column ?? null,
    },
  );
}

/** True for the refusal notRecorded made. */
export const isNotRecorded = (err: unknown): err is ApplicationFailure =>
  err instanceof ApplicationFailure && err.type === COMMAND_NOT_RECORDED;
