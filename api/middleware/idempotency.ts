import { createHash } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import { z } from 'zod';
import { conflict, validationFailed } from '../../lib/errors';
import { withIdempotencyScope } from '../../lib/runtime/idempotency-scope';
import { logger } from '../../lib/runtime/logger';
import type { Orm } from '../../db/orm';
import type { SecretBox } from '../../webhooks';
import type { Principal } from '../../domain/principal';
import { errorBody, toAppError } from './error-envelope';
import { idempotencyStore, scopeIdOf, type IdempotencyScope } from '../../db/idempotency-keys';

const IdempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII only');

/** Where idempotency() leaves the request's key handling for auth() to run, and where a route marks a secret. */
const UNDER_KEY = Symbol('tranche.idempotency.underKey');
const HOLDS_SECRET = Symbol('tranche.idempotency.holdsSecret');
type UnderKey = (principal: Principal, next: Next) => Promise<void>;

/**
 * Idempotency-Key on every authenticated POST (docs/decisions/0113-idempotency-key-every-post.md). The key is
 * scoped to the caller (organisation and user of the verified token), the method and the path.
 * First request: runs, and its answer is kept IDEMPOTENCY_KEY_TTL_HOURS. Same key, same body:
 * that answer again, with `Idempotent-Replayed: true`. Same key, other body: 409
 * IDEMPOTENCY_KEY_REUSED. While the first still runs: 409 IDEMPOTENCY_KEY_IN_USE with Retry-After.
 * Answers that say nothing about the request (5xx, 401, 403, 408, 429) are not kept: the key is
 * released and a retry runs again, as the same Temporal update (lib/runtime/idempotency-scope.ts).
 *
 * Nothing is claimed or replayed here: this only prepares the key, and auth() runs it once the
 * caller is authenticated and holds a role the route accepts (docs/decisions/README.md, Trust, second pass), so a
 * replay goes only to a caller who may make the request now.
 */
export function idempotency(deps: {
  orm: Orm;
  box: SecretBox;
  ttlSeconds: number;
  commandTimeoutMs: number;
}): Middleware {
  // A request that dies holding its key keeps it until its command could no longer be running.
  const store = idempotencyStore(deps.orm, deps.box, deps.ttlSeconds, Math.ceil(deps.commandTimeoutMs / 1000) + 30);

  async function underKey(ctx: Context, principal: Principal, key: string, next: Next): Promise<void> {
    const parsed = IdempotencyKey.safeParse(key);
    if (!parsed.success)
      throw validationFailed(
        parsed.error.issues.map((i) => ({ in: 'header', path: 'Idempotency-Key', message: i.message })),
      );

    const scope: IdempotencyScope = {
      principal: `${principal.orgId}:${principal.userId}`,
      method: ctx.method,
      path: ctx.path,
      key,
    };
    const roles = rolesOf(principal);
    const scopeId = scopeIdOf(scope);
    // Kept sealed by the store, never bare (docs/decisions/0382-idempotency-body-digests-sealed.md).
    const digest = createHash('sha256')
      .update(canonical((ctx.request as { body?: unknown }).body ?? null))
      .digest('hex');

    const claim = await store.claim(scope, digest);
    if (claim.kind === 'reused')
      throw conflict('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body');
    if (claim.kind === 'in_use') {
      throw conflict('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still running; retry later', {
        retry_after_seconds: claim.retryAfterSeconds,
      });
    }
    if (claim.kind === 'replay') {
      // An answer holding a secret goes only to the caller it was given to, with the same roles.
      if (claim.boundToRoles !== null && claim.boundToRoles !== roles)
        throw conflict(
          'IDEMPOTENCY_KEY_ROLES_CHANGED',
          "This Idempotency-Key's answer holds a secret and is replayed only to the caller with the roles it was given to",
        );
      ctx.status = claim.status;
      ctx.body = claim.bodySealed === null ? null : JSON.parse(deps.box.open(scopeId, claim.bodySealed));
      if (claim.status === 204) ctx.body = null;
      if (claim.boundToRoles !== null) ctx.set('Cache-Control', 'no-store');
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }

    let status: number;
    let body: unknown;
    try {
      await withIdempotencyScope(scopeId, async () => next());
      status = ctx.status;
      body = ctx.body;
    } catch (raw) {
      const err = toAppError(raw);
      await finish(store, deps.box, scope, scopeId, { status: err.status, body: errorBody(err), boundToRoles: null });
      throw raw;
    }
    const boundToRoles = (ctx.state as Record<symbol, unknown>)[HOLDS_SECRET] ? roles : null;
    // The command has happened: failing to keep its answer must not turn it into an error. The
    // row stays held until its lease ends; a retry then runs again (the same Temporal update).
    await finish(store, deps.box, scope, scopeId, { status, body, boundToRoles }).catch((err: unknown) =>
      logger.error({ err }, 'could not keep an idempotent answer'),
    );
  }

  return async (ctx, next) => {
    const key = ctx.get('idempotency-key');
    if (ctx.method === 'POST' && key) {
      (ctx.state as Record<symbol, UnderKey>)[UNDER_KEY] = (principal, run) => underKey(ctx, principal, key, run);
    }
    await next();
  };
}

/**
 * Called by auth() once the caller is authenticated and holds a role the route accepts: the
 * request's Idempotency-Key is claimed (or its kept answer replayed) only now. Routes without
 * auth() take no key.
 */
export function runUnderIdempotencyKey(ctx: Context, principal: Principal, next: Next): Promise<void> {
  const state = ctx.state as Record<symbol, UnderKey | undefined>;
  const underKey = state[UNDER_KEY];
  delete state[UNDER_KEY];
  return underKey ? underKey(principal, next) : next();
}

/**
 * A route whose answer holds a secret (an API key, a webhook signing secret) calls this: no cache
 * on the way keeps the answer, and its Idempotency-Key replays it only to the same caller holding
 * the same roles (docs/decisions/README.md, Trust, second pass).
 */
export function answerHoldsSecret(ctx: Context): void {
  ctx.set('Cache-Control', 'no-store');
  (ctx.state as Record<symbol, unknown>)[HOLDS_SECRET] = true;
}

const rolesOf = (p: Principal) => [...new Set(p.roles)].sort().join(' ');

const NOT_KEPT = new Set([401, 403, 408, 429]);

async function finish(
  store: ReturnType<typeof idempotencyStore>,
  box: SecretBox,
  scope: IdempotencyScope,
  scopeId: string,
  answer: { status: number; body: unknown; boundToRoles: string | null },
): Promise<void> {
  const { status, body } = answer;
  const json = body === undefined || body === null || (typeof body === 'object' && !Buffer.isBuffer(body));
  if (status >= 500 || NOT_KEPT.has(status) || !json) return store.release(scope);
  // Sealed: an answer may hold a secret (API key, signing secret) and is replayed verbatim.
  const sealed = body == null ? null : box.seal(scopeId, JSON.stringify(body));
  await store.complete(scope, { status, bodySealed: sealed, boundToRoles: answer.boundToRoles });
}

/** JSON with object keys sorted at every depth: the same body in another key order is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
