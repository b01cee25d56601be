import { createHash, randomInt } from 'node:crypto';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { conflict, validationFailed } from '../../lib/errors';
import { withIdempotencyScope } from '../../lib/idempotency-scope';
import { logger } from '../../lib/logger';
import type { Orm } from '../../db/orm';
import type { SecretBox } from '../../webhooks';
import type { AccessTokens } from '../identity/access-tokens';
import { errorBody, toAppError } from './errors';
import { idempotencyStore, type IdempotencyScope } from './idempotency-store';

const IdempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII only');

/**
 * Idempotency-Key on every authenticated POST (docs/decisions/0113-idempotency-key-every-post.md). The key is
 * scoped to the caller (organisation and user of the verified token), the method and the path.
 * First request: runs, and its answer is kept IDEMPOTENCY_KEY_TTL_HOURS. Same key, same body:
 * that answer again, with `Idempotent-Replayed: true`. Same key, other body: 409
 * IDEMPOTENCY_KEY_REUSED. While the first still runs: 409 IDEMPOTENCY_KEY_IN_USE with Retry-After.
 * Answers that say nothing about the request (5xx, 401, 403, 408, 429) are not kept: the key is
 * released and a retry runs again, as the same Temporal update (lib/idempotency-scope.ts).
 */
export function idempotency(deps: {
  orm: Orm;
  tokens: AccessTokens;
  box: SecretBox;
  ttlHours: number;
  commandTimeoutMs: number;
}): Middleware {
  // A request that dies holding its key keeps it until its command could no longer be running.
  const store = idempotencyStore(deps.orm, deps.ttlHours * 3600, Math.ceil(deps.commandTimeoutMs / 1000) + 30);
  return async (ctx, next) => {
    const key = ctx.get('idempotency-key');
    if (ctx.method !== 'POST' || !key) return next();
    const match = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'));
    const principal = match ? await deps.tokens.verify(match[1]!).catch(() => undefined) : undefined;
    if (!principal) return next(); // auth() answers 401 itself; nothing to scope a key to
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
    const scopeId = createHash('sha256').update(JSON.stringify(scope)).digest('hex');
    const hash = createHash('sha256')
      .update(canonical((ctx.request as { body?: unknown }).body ?? null))
      .digest('hex');
    if (randomInt(100) === 0)
      store.purgeExpired().catch((err: unknown) => logger.warn({ err }, 'idempotency purge failed'));

    const claim = await store.claim(scope, hash);
    if (claim.kind === 'reused')
      throw conflict('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body');
    if (claim.kind === 'in_use') {
      throw conflict('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still running; retry later', {
        retry_after_seconds: claim.retryAfterSeconds,
      });
    }
    if (claim.kind === 'replay') {
      ctx.status = claim.status;
      ctx.body = claim.bodySealed === null ? null : JSON.parse(deps.box.open(scopeId, claim.bodySealed));
      if (claim.status === 204) ctx.body = null;
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
      await finish(store, deps.box, scope, scopeId, err.status, errorBody(err));
      throw raw;
    }
    // The command has happened: failing to keep its answer must not turn it into an error. The
    // row stays held until its lease ends; a retry then runs again (the same Temporal update).
    await finish(store, deps.box, scope, scopeId, status, body).catch((err: unknown) =>
      logger.error({ err }, 'could not keep an idempotent answer'),
    );
  };
}

const NOT_KEPT = new Set([401, 403, 408, 429]);

async function finish(
  store: ReturnType<typeof idempotencyStore>,
  box: SecretBox,
  scope: IdempotencyScope,
  scopeId: string,
  status: number,
  body: unknown,
): Promise<void> {
  const json = body === undefined || body === null || (typeof body === 'object' && !Buffer.isBuffer(body));
  if (status >= 500 || NOT_KEPT.has(status) || !json) return store.release(scope);
  // Sealed: an answer may hold a signing secret (endpoint create, rotate) and is replayed verbatim.
  await store.complete(scope, status, body == null ? null : box.seal(scopeId, JSON.stringify(body)));
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
