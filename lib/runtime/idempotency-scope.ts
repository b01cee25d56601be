import { currentRequestScope } from './request-scope';

/**
 * The Idempotency-Key a request runs under, as one opaque id (a hash of caller, method, path and
 * key), carried to the Temporal client: api/issuance/subscription-client.ts makes it the update id,
 * so a command retried with the same key is the same update and Temporal answers its outcome.
 * Kept in the request's scope (lib/runtime/request-scope.ts): a request runs under one key at most.
 */
export async function withIdempotencyScope<T>(id: string, run: () => Promise<T>): Promise<T> {
  const request = currentRequestScope();
  if (!request) throw new Error('an Idempotency-Key scope is opened inside a request only');
  request.idempotencyScope = id;
  try {
    return await run();
  } finally {
    request.idempotencyScope = undefined;
  }
}

export function currentIdempotencyScope(): string | undefined {
  return currentRequestScope()?.idempotencyScope;
}
