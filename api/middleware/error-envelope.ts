import type { Context, Middleware } from 'koa';
import {
  isGrpcServiceError,
  ServiceError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { NotFoundError } from '@mikro-orm/core';
import { ZodError } from 'zod';
import { AppError, dependencyUnavailable, notFound, validationFailed } from '../../lib/errors';
import type { DependencyWatch } from '../dependency-watch';
import { logger } from '../../lib/runtime/logger';

/**
 * The one place an error becomes a response: `{ success: false, error: { code, message, details } }`.
 * Routes never build error bodies by hand. A failure while PostgreSQL or Temporal is down is that
 * outage (503 SERVICE_UNAVAILABLE naming it), not a bug (500).
 */
export function errorEnvelope(watch?: DependencyWatch): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined)
        throw new AppError(404, 'ROUTE_NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`);
    } catch (raw) {
      const err = await toResponseError(raw, watch);
      if (err.status >= 500 && err.code !== 'SERVICE_UNAVAILABLE')
        logger.error({ err: raw, requestId: ctx.state.requestId }, 'request failed');
      ctx.status = err.status;
      ctx.body = errorBody(err);
      setRetryAfter(ctx, err);
    }
  };
}

/**
 * Routes that answer whatever the dependencies do: liveness, readiness (it names what is down), the
 * API's own description, and the console, whose pages call this API and show its 503 as a page.
 */
const UNGATED = /^\/(health|ready|openapi\.json|docs(\/.*)?|console(\/.*)?)$/;

/**
 * While PostgreSQL or Temporal is known to be down, every route answers 503 at once rather than
 * each request waiting to fail on it (a Temporal call retries for some 20 s before it gives up).
 */
export function outageGate(watch: DependencyWatch): Middleware {
  return async (ctx, next) => {
    if (!UNGATED.test(ctx.path)) {
      const down = await watch.down();
      if (down.length) throw dependencyUnavailable(down);
    }
    await next();
  };
}

/** The AppError to answer with: an outage's 503 when a server-side failure met a dependency that is down. */
export async function toResponseError(raw: unknown, watch?: DependencyWatch): Promise<AppError> {
  const err = toAppError(raw);
  if (!watch || err.status < 500 || err.status === 503) return err;
  return (await watch.outage()) ?? err;
}

function setRetryAfter(ctx: Context, err: AppError): void {
  const retryAfter = (err.details as { retry_after_seconds?: unknown } | undefined)?.retry_after_seconds;
  if (typeof retryAfter === 'number') ctx.set('Retry-After', String(retryAfter));
}

export const errorBody = (err: AppError) => ({
  success: false,
  error: { code: err.code, message: err.message, details: err.details ?? null },
});

/** Seconds a caller should wait before retrying a command whose outcome is unknown. */
const OUTCOME_UNKNOWN_RETRY_AFTER_SECONDS = 5;

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof ZodError)
    return validationFailed(err.issues.map((i) => ({ path: i.path.join('.'), message: i.message })));
  if (err instanceof NotFoundError) return notFound('Resource');
  if (err instanceof WorkflowNotFoundError) return notFound('Subscription');
  if (err instanceof WorkflowUpdateFailedError) {
    const cause = err.cause;
    if (cause instanceof ApplicationFailure && cause.type) {
      const detail = (cause.details?.[0] ?? {}) as { status?: number; details?: unknown };
      return new AppError(detail.status ?? 409, cause.type, cause.message, detail.details);
    }
    return new AppError(502, 'UPSTREAM_FAILED', 'A downstream service did not complete the command; try again');
  }
  // The workflow did not answer within the command deadline: the update may still apply.
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError || deadlineExceeded(err)) {
    return new AppError(
      503,
      'COMMAND_OUTCOME_UNKNOWN',
      'The command was sent but not answered in time and may still apply; retry with the same Idempotency-Key to get its result',
      {
        retry_after_seconds: OUTCOME_UNKNOWN_RETRY_AFTER_SECONDS,
      },
    );
  }
  const status = (err as { status?: number; expose?: boolean }).status;
  // The router refuses a method a path lacks (405) or that no route has at all (501, e.g. TRACE):
  // both are the caller's mistake, so both are a 405, not a server error.
  if (status === 405 || status === 501)
    return new AppError(405, 'METHOD_NOT_ALLOWED', 'This path does not accept this method');
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return new AppError(413, 'PAYLOAD_TOO_LARGE', 'The request body is too large');
    if (status === 415) return new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json');
    return new AppError(400, 'MALFORMED_REQUEST', 'The request body could not be parsed as JSON');
  }
  return new AppError(500, 'INTERNAL', 'Something went wrong on our side');
}

/** gRPC DEADLINE_EXCEEDED (code 4), bare or wrapped in the client's ServiceError. */
function deadlineExceeded(err: unknown): boolean {
  const grpc = err instanceof ServiceError ? err.cause : err;
  return isGrpcServiceError(grpc) && grpc.code === 4;
}
