import type { RouterContext } from '@koa/router';
import type { Middleware } from 'koa';
import type { z } from 'zod';
import { validationFailed } from '../../lib/errors';
import type { AuthState } from './auth';

export interface Schemas {
  body?: z.ZodType;
  params?: z.ZodType;
  query?: z.ZodType;
}
export type Input<S extends Schemas> = { [K in keyof S]: S[K] extends z.ZodType ? z.infer<S[K]> : never };
export type Ctx = RouterContext<AuthState>;

/** Where validate() leaves its schemas on the middleware it returns, so api/openapi documents exactly what is checked. */
export const ROUTE_SCHEMAS = Symbol('tranche.routeSchemas');

/**
 * Validates path, query and body with zod, then runs the handler with the typed input.
 * Every problem found is reported at once, in the error envelope's details.
 */
export function validate<S extends Schemas>(schemas: S, handler: (ctx: Ctx, input: Input<S>) => Promise<void> | void): Middleware {
  const middleware: Middleware = async (ctx) => {
    const sources = { params: (ctx as unknown as Ctx).params ?? {}, query: ctx.query, body: (ctx.request as { body?: unknown }).body ?? {} };
    const input: Record<string, unknown> = {};
    const issues: { in: string; path: string; message: string }[] = [];
    for (const key of ['params', 'query', 'body'] as const) {
      const schema = schemas[key];
      if (!schema) continue;
      const result = schema.safeParse(sources[key]);
      if (result.success) input[key] = result.data;
      else for (const i of result.error.issues) issues.push({ in: key, path: i.path.join('.'), message: i.message });
    }
    if (issues.length) throw validationFailed(issues);
    await handler(ctx as unknown as Ctx, input as Input<S>);
  };
  return Object.assign(middleware, { [ROUTE_SCHEMAS]: schemas as Schemas });
}
