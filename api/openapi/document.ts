import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { AUTH_ROLES } from '../middleware/auth';
import { ROUTE_SCHEMAS, type Schemas } from '../middleware/validate';
import { ERROR_ENVELOPE, ERROR_REASONS, inputSchema, SUCCESS_ENVELOPE, type JsonSchema } from './json-schema';

type Tagged = Middleware & { [ROUTE_SCHEMAS]?: Schemas; [AUTH_ROLES]?: string[] };
const WRITES = new Set(['post', 'put', 'patch', 'delete']);

/**
 * The OpenAPI 3.1 document, read off the routers the app serves: each layer's path and methods,
 * the schemas its validate() checks, and whether auth() guards it. No hand-written copy to drift.
 */
export function buildOpenApi(routers: Router[], info: { title: string; version: string; description?: string }): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const router of routers) {
    for (const layer of router.stack) {
      if (typeof layer.path !== 'string') continue;
      const methods = layer.methods.map((m) => m.toLowerCase()).filter((m) => m !== 'head' && m !== 'options');
      if (!methods.length) continue;
      const stack = layer.stack as Tagged[];
      const schemas = stack.find((m) => m[ROUTE_SCHEMAS])?.[ROUTE_SCHEMAS];
      const roles = stack.find((m) => m[AUTH_ROLES])?.[AUTH_ROLES];
      const path = layer.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      for (const method of methods) {
        (paths[path] ??= {})[method] = operation(method, layer.path, schemas, roles);
      }
    }
  }
  return {
    openapi: '3.1.0',
    info,
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from POST /identity/auth/exchange (spec §5.1)' } },
      schemas: { SuccessEnvelope: SUCCESS_ENVELOPE, ErrorEnvelope: ERROR_ENVELOPE },
    },
  };
}

function operation(method: string, rawPath: string, schemas: Schemas | undefined, roles: string[] | undefined): JsonSchema {
  const enveloped = Boolean(schemas || roles);
  const op: JsonSchema = { operationId: `${method}${rawPath.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}` };
  if (roles) {
    op.security = [{ bearer: [] }];
    if (roles.length) op.description = `Needs the role ${roles.join(' or ')}.`;
  }
  op.parameters = [...pathParameters(rawPath, schemas?.params), ...queryParameters(schemas?.query)];
  const hasBody = Boolean(schemas?.body) && method !== 'get' && method !== 'delete';
  if (hasBody) op.requestBody = { required: true, content: { 'application/json': { schema: inputSchema(schemas!.body!) } } };

  const errors = new Set<number>();
  if (roles) [401, 403, 404].forEach((s) => errors.add(s));
  if (rawPath.includes(':')) errors.add(404);
  if (schemas) errors.add(422);
  // A query can parse and still be refused by the handler (a cursor that does not decode).
  if (schemas?.query) errors.add(400);
  // The body parser runs before any route, so every body-carrying method can meet its refusals.
  if (['post', 'put', 'patch'].includes(method)) [400, 413, 415].forEach((s) => errors.add(s));
  // Writes without auth() check a signature or an API key of their own.
  if (WRITES.has(method) && !roles) [401, 404].forEach((s) => errors.add(s));
  if (WRITES.has(method)) errors.add(429);
  if (WRITES.has(method) && roles) errors.add(409);

  const responses: Record<string, JsonSchema> = {};
  for (const status of successStatuses(method)) {
    responses[status] = status === '204' ? { description: 'Done; no body' } : enveloped ? jsonResponse('Success', '#/components/schemas/SuccessEnvelope') : { description: 'Success' };
  }
  for (const status of [...errors].sort((a, b) => a - b)) {
    // A route outside validate()/auth() may answer its refusals its own way (the sandbox's HTML pages).
    responses[String(status)] = enveloped ? jsonResponse(ERROR_REASONS[status]!, '#/components/schemas/ErrorEnvelope') : { description: ERROR_REASONS[status]! };
  }
  op.responses = responses;
  return op;
}

/** What a method answers on success in this API: creates answer 201, commands 200, deletes 204. */
function successStatuses(method: string): string[] {
  if (method === 'post') return ['200', '201'];
  if (method === 'delete') return ['200', '204'];
  return ['200'];
}

function jsonResponse(description: string, ref: string): JsonSchema {
  return { description, content: { 'application/json': { schema: { $ref: ref } } } };
}

function pathParameters(rawPath: string, schema: Schemas['params']): JsonSchema[] {
  const json = schema ? inputSchema(schema) : undefined;
  const props = (json?.properties ?? {}) as Record<string, JsonSchema>;
  return [...rawPath.matchAll(/:([A-Za-z0-9_]+)/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: props[name!] ?? { type: 'string' } }));
}

function queryParameters(schema: Schemas['query']): JsonSchema[] {
  if (!schema) return [];
  const json = inputSchema(schema);
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries((json.properties ?? {}) as Record<string, JsonSchema>).map(([name, s]) => ({ name, in: 'query', required: required.has(name), schema: s }));
}
