import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request a piece of work runs for, carried through awaits without threading it through every call:
 * api/middleware/request-context.ts opens the scope; the Temporal client's command log reads its id, the
 * Idempotency-Key's scope (lib/runtime/idempotency-scope.ts) and the request's entity manager (db/orm.ts) live in
 * it too. One AsyncLocalStorage for all of them: Node 20 copies every enabled storage's value onto every promise a
 * request makes (docs/decisions/0435-one-request-scope.md).
 */
interface RequestScope {
  readonly requestId: string;
  idempotencyScope?: string;
  /** Values made at most once per request, each for its owner (an ORM's forked entity manager). */
  slots?: Map<object, unknown>;
}

const scope = new AsyncLocalStorage<RequestScope>();

export function withRequestId<T>(requestId: string, run: () => Promise<T>): Promise<T> {
  return scope.run({ requestId }, run);
}

export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}

/** The current request's scope, when work runs for one (lib/runtime/idempotency-scope.ts sets its field). */
export const currentRequestScope = (): RequestScope | undefined => scope.getStore();

/** Marks a slot whose value is being made: what asks for it meanwhile (the value's own constructor) gets undefined. */
const MAKING = Symbol('making');

/** `owner`'s value for the current request, made by `make` the first time it is asked for; undefined outside a request. */
export function requestSlot<T>(owner: object, make: () => T): T | undefined {
  const store = scope.getStore();
  if (!store) return undefined;
  store.slots ??= new Map();
  if (!store.slots.has(owner)) {
    store.slots.set(owner, MAKING);
    try {
      store.slots.set(owner, make());
    } catch (err) {
      store.slots.delete(owner);
      throw err;
    }
  }
  const value = store.slots.get(owner);
  return value === MAKING ? undefined : (value as T);
}
