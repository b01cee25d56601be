import type { Context } from 'koa';
import { AppError } from '../lib/errors';
import { logger } from '../lib/runtime/logger';
import { ROUTE_DOC, type RouteDoc } from './middleware/validate';

/**
 * The one success envelope (spec §1): `{ success: true, data }`. When the route documents its
 * answer (validate({ response })), `data` is built through that schema: unknown fields are dropped
 * and a value off the schema is a bug, answered as a 500 rather than sent off the document.
 */
export function ok(ctx: Context, data: unknown, status?: number): void {
  const doc = (ctx.state as Record<symbol, unknown>)[ROUTE_DOC] as RouteDoc | undefined;
  let body = data;
  if (doc?.response) {
    const parsed = doc.response.safeParse(data);
    if (!parsed.success) {
      // Paths and codes only: the values may be personal data or secrets.
      logger.error(
        {
          route: ctx._matchedRoute,
          issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), code: i.code })),
        },
        'an answer does not match its documented schema',
      );
      throw new AppError(500, 'INTERNAL', 'Something went wrong on our side');
    }
    body = parsed.data;
  }
  ctx.status = status ?? doc?.status ?? 200;
  ctx.body = { success: true, data: body };
}
