import type { RouterContext } from '@koa/router';
import type { Middleware } from 'koa';
import type { z } from 'zod';
import { validationFailed } from '../../lib/errors';
import { logger } from '../../lib/runtime/logger';
import { codePointName, escapeIllFormed, illFormed, type IllFormed } from '../../lib/text';
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
      // Every source, read by a schema or not: a route may read its body itself (a processor's notification).
      const unstorable = illFormedStrings(sources[key]);
      if (unstorable) {
        for (const found of unstorable) issues.push({ in: key, ...found });
        continue;
      }
      const schema = (schemas as Schemas)[key];
      if (!schema) continue;
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

/** Where an unstorable string was found (dotted, as zod's paths are) and what is wrong with it. */
interface Unstorable {
  path: string;
  message: string;
}

/**
 * Every string and object key of the input that the database could never store: a NUL (PostgreSQL
 * text cannot hold U+0000) or a lone surrogate (half of a character, which jsonb refuses; it would
 * fail a workflow's projection write for ever, docs/decisions/0360-well-formed-text-at-the-door.md).
 * No field of this API has a use for either, so both are refused here, for every route at once.
 * One walk over the parsed input, cheap on the hot path: two native scans of each string and key,
 * no allocation unless something is found (about 0.6 µs for a ping's path, 2 µs for an endpoint's
 * body). The body's depth is bounded before this runs (body-depth.ts).
 */
function illFormedStrings(value: unknown): Unstorable[] | undefined {
  walked.length = 0;
  return walk(value, undefined);
}

/** The path to where walk() is; the walk is synchronous, so one stack serves every request. */
const walked: (string | number)[] = [];

function walk(value: unknown, found: Unstorable[] | undefined): Unstorable[] | undefined {
  if (typeof value === 'string') {
    const wrong = illFormed(value);
    if (wrong) (found ??= []).push({ path: walked.join('.'), message: problem(wrong) });
    return found;
  }
  if (value === null || typeof value !== 'object') return found;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      walked.push(i);
      found = walk(value[i], found);
      walked.pop();
    }
    return found;
  }
  for (const key in value) {
    const wrong = illFormed(key);
    walked.push(wrong ? escapeIllFormed(key) : key);
    if (wrong) (found ??= []).push({ path: walked.join('.'), message: `a key ${problem(wrong)}` });
    else found = walk((value as Record<string, unknown>)[key], found);
    walked.pop();
  }
  return found;
}

function problem(wrong: IllFormed): string {
  if (wrong.kind === 'nul') return 'must not contain the NUL character (U+0000)';
  return `must be well-formed Unicode: it holds a lone surrogate (${codePointName(wrong.unit)}), half of a character, which cannot be stored`;
}
