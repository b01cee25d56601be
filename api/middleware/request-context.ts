import type { Middleware } from 'koa';
import { RequestContext } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import type { Orm } from '../../db/orm';
import { logger } from '../../lib/runtime/logger';
import { withRequestId } from '../../lib/runtime/request-scope';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** A request id (taken from X-Request-Id when sane), one access log line, one identity map per request. */
export function requestContext(orm: Orm): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await withRequestId(requestId, () => RequestContext.create(orm.em, next));
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.debug({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms }, 'request');
    }
  };
}
