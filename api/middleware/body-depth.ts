import type { Middleware } from 'koa';
import { badRequest } from '../../lib/errors';

/** Far deeper than any body of this API needs (none nests more than a few levels). */
const MAX_BODY_DEPTH = 32;

/**
 * Refuses a parsed JSON body nested deeper than `maxDepth` objects and arrays, with 400
 * BODY_TOO_DEEP, before anything walks it: the NUL check (validate.ts), the idempotency hash and
 * zod all recurse, and a body of thousands of levels would exhaust their stack as a 500. The walk
 * here keeps its own stack, so it cannot.
 */
export function bodyDepthLimit(maxDepth = MAX_BODY_DEPTH): Middleware {
  return async (ctx, next) => {
    const body = (ctx.request as { body?: unknown }).body;
    if (deeperThan(body, maxDepth))
      throw badRequest('BODY_TOO_DEEP', `The request body nests objects and arrays deeper than ${maxDepth} levels`, {
        max_depth: maxDepth,
      });
    await next();
  };
}

/** Whether objects and arrays nest deeper than `max` in `value` (the top-level one is level 1). */
function deeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length) {
    const [v, depth] = pending.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
    }
  }
  return false;
}
