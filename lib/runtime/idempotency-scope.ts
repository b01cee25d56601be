import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The Idempotency-Key a request runs under, as one opaque id (a hash of caller, method, path and
 * key), carried to the Temporal client: api/issuance/subscription-client.ts makes it the update id,
 * so a command retried with the same key is the same update and Temporal answers its outcome.
 */
const scope = new AsyncLocalStorage<{ id: string }>();

export function withIdempotencyScope<T>(id: string, run: () => Promise<T>): Promise<T> {
  return scope.run({ id }, run);
}

export function currentIdempotencyScope(): string | undefined {
  return scope.getStore()?.id;
}
