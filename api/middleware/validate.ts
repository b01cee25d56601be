import type { RouterContext } from '@koa/router';
import type { Middleware } from 'koa';
import type { z } from 'zod';
import { validationFailed } from '../../lib/errors';
import { logger } from '../../lib/runtime/logger';
import type { AuthState } from './auth';

export interface Schemas {
  body?: z.ZodType;
  params?: z.ZodType;
  query?: z.ZodType;
}
/** What the document says about a route besides its input: its one-line summary and its success answer. */
export interface RouteDoc {
  summary?: string;
  /** The `data` of the success envelope; ok() builds the answer through it (api/respond.ts). */
  response?: z.ZodType;
  /** The success status this route answers (default 200; 204 has no body). */
  status?: 200 | 201 | 202 | 204 | 303;
  /** A success answer that is not the JSON envelope (an export), by its media type. */
  produces?: 'text/csv';
  /** A second success status with the same body, and when it is answered (an erasure not complete: 202). */
  alsoStatus?: { status: 202; description: string };
}
export type Input<S extends Schemas> = {
  [K in keyof S & keyof Schemas]: S[K] extends z.ZodType ? z.infer<S[K]> : never;
};
export type Ctx = RouterContext<AuthState>;

/** Where validate() leaves its schemas on the middleware it returns, so api/openapi documents exactly what is checked. */
export const ROUTE_SCHEMAS = Symbol('tranche.routeSchemas');
/** Where validate() leaves the route's RouteDoc, for the document and for ok() while the handler runs. */
export const ROUTE_DOC = Symbol('tranche.routeDoc');

/**
 * Validates path, query and body with zod, then runs the handler with the typed input.
 * Every problem found is reported at once, in the error envelope's details.
 */
export function validate<S extends Schemas>(
  spec: S & RouteDoc,
  handler: (ctx: Ctx, input: Input<S>) => Promise<void> | void,
): Middleware {
  const { summary, response, status, produces, alsoStatus, ...schemas } = spec;
  const doc: RouteDoc = { summary, response, status, produces, alsoStatus };
  const middleware: Middleware = async (ctx) => {
    (ctx.state as Record<symbol, unknown>)[ROUTE_DOC] = doc;
    const sources = {
      params: (ctx as unknown as Ctx).params ?? {},
      query: ctx.query,
      body: (ctx.request as { body?: unknown }).body ?? {},
    };
    const input: Record<string, unknown> = {};
    const issues: { in: string; path: string; message: string }[] = [];
    for (const key of ['params', 'query', 'body'] as const) {
      const schema = (schemas as Schemas)[key];
      if (!schema) continue;
      const nul = nulPath(sources[key], []);
      if (nul) {
        issues.push({ in: key, path: nul.join('.'), message: 'must not contain the NUL character (U+0000)' });
        continue;
      }
      const result = parseSafely(schema, sources[key]);
      if (!result) {
        issues.push({ in: key, path: '', message: 'is not valid' });
        continue;
      }
      if (result.success) input[key] = result.data;
      else for (const i of result.error.issues) issues.push({ in: key, path: i.path.join('.'), message: i.message });
    }
    if (issues.length) throw validationFailed(issues);
    await handler(ctx as unknown as Ctx, input as Input<S>);
  };
  const inputs = Object.keys(schemas).length ? { [ROUTE_SCHEMAS]: schemas as Schemas } : {};
  return Object.assign(middleware, inputs, { [ROUTE_DOC]: doc });
}

/**
 * A refinement can throw on input an earlier check already refused (zod 4 runs every check of a
 * chain unless told to abort). That input is the caller's mistake, so it is a 422, not a 500; the
 * throw is still logged (its type and where, never the input) so the schema can be fixed.
 */
function parseSafely(schema: z.ZodType, value: unknown): ReturnType<z.ZodType['safeParse']> | undefined {
  try {
    return schema.safeParse(value);
  } catch (err) {
    // Name and stack only: a message may quote the input, and the input may be a credential.
    logger.warn(
      { err: { type: (err as Error).name, stack: (err as Error).stack?.split('\n').slice(1, 4).join('\n') } },
      'a validation schema threw instead of reporting an issue',
    );
    return undefined;
  }
}

/**
 * PostgreSQL text cannot hold U+0000, so a string carrying it would fail at the database as a 500;
 * no field of this API has a use for it, so it is refused here, for every route at once.
 */
function nulPath(value: unknown, path: (string | number)[]): (string | number)[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPath(value[i], [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) return [...path, k.replace(/\u0000/g, '\\u0000')];
      const found = nulPath(v, [...path, k]);
      if (found) return found;
    }
  }
  return undefined;
}
