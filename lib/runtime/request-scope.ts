import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request a piece of work runs for, carried through awaits without threading it through every
 * call: api/middleware/request-context.ts opens the scope, the Temporal client's command log reads it.
 */
const scope = new AsyncLocalStorage<{ requestId: string }>();

export function withRequestId<T>(requestId: string, run: () => Promise<T>): Promise<T> {
  return scope.run({ requestId }, run);
}

export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}
