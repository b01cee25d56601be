/**
 * How the subscription workflow tells failures apart: a processor's refusal from an outage, an
 * activity's typed failure from any other. Workflow code: no I/O.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { refusal } from '../domain/refusal';

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
