import { ApplicationFailure } from '@temporalio/common';

/**
 * A command the workflow refuses. It crosses Temporal as a non-retryable ApplicationFailure whose
 * type is the stable error code and whose first detail carries the HTTP status; the API's error
 * middleware turns it back into an AppError.
 */
export function refusal(status: number, code: string, message: string, details?: unknown): ApplicationFailure {
  return ApplicationFailure.create({ type: code, message, nonRetryable: true, details: [{ status, details }] });
}

export const invalidTransition = (command: string, status: string, allowed: readonly string[]) =>
  refusal(409, 'INVALID_TRANSITION', `Cannot ${command} a subscription that is ${status}`, {
    status,
    allowed_from: allowed,
  });
