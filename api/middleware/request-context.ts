import type { Middleware } from 'koa';
import { randomUUID } from 'node:crypto';
import { logger } from '../../lib/runtime/logger';
import { withRequestId } from '../../lib/runtime/request-scope';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * A request id (taken from X-Request-Id when sane), one access log line, one identity map per request: `orm.em`
 * inside the request is a fork made the first time the request uses it (db/orm.ts), so a request that never
 * touches the ORM's entities (a test ping) forks nothing.
 */
export function requestContext(): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await withRequestId(requestId, next);
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.debug({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms }, 'request');
    }
  };
}
