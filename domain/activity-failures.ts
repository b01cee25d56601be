/**
 * Which activity failures are retried (docs/decisions/0364-refused-records-end-the-command.md): the
 * one list every workflow's retry policy names, and the failure types the activities answer
 * (activities/activity-failures.ts). Pure: bundled into workflow code.
 */
import type { RetryPolicy } from '@temporalio/common';

/** PostgreSQL refused a value (SQLSTATE class 22, data exception): the same write can never succeed. */
export const DATA_REFUSED = 'DATA_REFUSED';
/** PostgreSQL refused a row (class 23, integrity constraint violation): the same write can never succeed. */
export const CONSTRAINT_REFUSED = 'CONSTRAINT_REFUSED';
/** The drawn reference code is another subscription's (one case of class 23): the workflow draws again. */
export const REFERENCE_CODE_TAKEN = 'REFERENCE_CODE_TAKEN';

/** Failures retrying cannot cure. Every other failure (a connection, a restart, a deadlock, a timeout) is retried. */
const NOT_RETRYABLE: readonly string[] = [DATA_REFUSED, CONSTRAINT_REFUSED, REFERENCE_CODE_TAKEN];

/** A failure type that says a record was refused for its content: the command that made it cannot land as it is. */
export const refusedRecord = (type: string | null | undefined): boolean =>
  type === DATA_REFUSED || type === CONSTRAINT_REFUSED;

/** The refusal a command gets when its effect cannot be recorded: nothing changed, the subscription answers the next one. */
export const COMMAND_NOT_RECORDED = 'COMMAND_NOT_RECORDED';

/** What a refused record's failure carries in its first detail (activities/activity-failures.ts). */
export interface RefusedRecordDetail {
  /** The PostgreSQL SQLSTATE, e.g. 23514 (a CHECK), 22P02 (invalid text), 22001 (too long). */
  sqlstate: string;
  /** The constraint, table and column PostgreSQL named, when it named them. */
  constraint: string | null;
  table: string | null;
  column: string | null;
}

/** An activity's retry policy: its backoff, and the failures it never retries. */
export const retryPolicy = (backoff: Omit<RetryPolicy, 'nonRetryableErrorTypes'>): RetryPolicy => ({
  ...backoff,
  nonRetryableErrorTypes: [...NOT_RETRYABLE],
});
