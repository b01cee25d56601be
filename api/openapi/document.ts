import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { AUTH_ROLES } from '../middleware/auth';
import { KEY_REQUIRED } from '../middleware/idempotency-required';
import { ROUTE_DOC, ROUTE_SCHEMAS, type RouteDoc, type Schemas } from '../middleware/validate';
import { ERROR_ENVELOPE, ERROR_REASONS, inputSchema, outputSchema, type JsonSchema } from './json-schema';
import { IDEMPOTENCY_HEADER, REQUIRED_IDEMPOTENCY_HEADER, RETRY_AFTER_HEADER } from './headers';
import { TAGS, tagOf } from './tags';
import { webhooksSection } from './webhook-document';
import type { BehaviourSet } from '../../lib/behaviour-set';

type Tagged = Middleware & {
  [ROUTE_SCHEMAS]?: Schemas;
  [AUTH_ROLES]?: string[];
  [ROUTE_DOC]?: RouteDoc;
  [KEY_REQUIRED]?: true;
};
const WRITES = new Set(['post', 'put', 'patch', 'delete']);
const KEY_MISSING = 'IDEMPOTENCY_KEY_REQUIRED: the Idempotency-Key header is missing (this command moves money)';

export interface DocumentInfo {
  title: string;
  version: string;
  description?: string;
}

/**
 * The OpenAPI 3.1 document, read off the routers the app serves: each layer's path and methods,
 * the schemas its validate() checks and answers with, and whether auth() guards it. No
 * hand-written copy to drift. Named view schemas (`.meta({ id })`) become components.
 */
export function buildOpenApi(routers: Router[], info: DocumentInfo, set: BehaviourSet): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const components: Record<string, JsonSchema> = { ErrorEnvelope: ERROR_ENVELOPE };
  for (const router of routers) {
    for (const layer of router.stack) {
      if (typeof layer.path !== 'string') continue;
      const methods = layer.methods.map((m) => m.toLowerCase()).filter((m) => m !== 'head' && m !== 'options');
      if (!methods.length) continue;
      const stack = layer.stack as Tagged[];
      const route: Route = {
        rawPath: layer.path,
        schemas: stack.find((m) => m[ROUTE_SCHEMAS])?.[ROUTE_SCHEMAS],
        roles: stack.find((m) => m[AUTH_ROLES])?.[AUTH_ROLES],
        doc: stack.find((m) => m[ROUTE_DOC])?.[ROUTE_DOC] ?? {},
        keyRequired: stack.some((m) => m[KEY_REQUIRED]),
      };
      const path = layer.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      for (const method of methods) {
        (paths[path] ??= {})[method] = operation(method, route, components);
      }
    }
  }
  const webhooks = webhooksSection(set, components);
  return {
    openapi: '3.1.0',
    info,
    tags: TAGS,
    paths,
    webhooks,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'An access token from POST /identity/auth/exchange (spec §5.1)',
        },
      },
      schemas: components,
    },
  };
}

interface Route {
  rawPath: string;
  schemas?: Schemas;
  roles?: string[];
  doc: RouteDoc;
  /** keyRequired() guards it: the Idempotency-Key header is required, not optional. */
  keyRequired: boolean;
}

function operation(
  method: string,
  { rawPath, schemas, roles, doc, keyRequired }: Route,
  components: Record<string, JsonSchema>,
): JsonSchema {
  const enveloped = Boolean(schemas || roles || doc.response);
  const op: JsonSchema = {
    operationId: `${method}${rawPath.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
    tags: [tagOf(rawPath)],
  };
  if (doc.summary) op.summary = doc.summary;
  if (roles) {
    op.security = [{ bearer: [] }];
    if (roles.length) op.description = `Needs the role ${roles.join(' or ')}.`;
  }
  // Authenticated POSTs are commands: each takes an Idempotency-Key (api/middleware/idempotency.ts),
  // and those that move money require one (api/middleware/idempotency-required.ts).
  const idempotent = method === 'post' && Boolean(roles);
  op.parameters = [
    ...pathParameters(rawPath, schemas?.params),
    ...queryParameters(schemas?.query),
    ...(idempotent ? [keyRequired ? REQUIRED_IDEMPOTENCY_HEADER : IDEMPOTENCY_HEADER] : []),
  ];
  const hasBody = Boolean(schemas?.body) && method !== 'get' && method !== 'delete';
  if (hasBody)
    op.requestBody = { required: true, content: { 'application/json': { schema: inputSchema(schemas!.body!) } } };

  const errors = new Set<number>();
  if (roles) [401, 403, 404].forEach((s) => errors.add(s));
  if (rawPath.includes(':')) errors.add(404);
  if (schemas || idempotent) errors.add(422);
  // A query can parse and still be refused by the handler (a cursor that does not decode).
  if (schemas?.query) errors.add(400);
  // The body parser runs before any route, so every body-carrying method can meet its refusals.
  if (['post', 'put', 'patch'].includes(method)) [400, 413, 415].forEach((s) => errors.add(s));
  // Writes without auth() check a signature or an API key of their own.
  if (WRITES.has(method) && !roles) [401, 404].forEach((s) => errors.add(s));
  if (WRITES.has(method)) errors.add(429);
  if (WRITES.has(method) && roles) errors.add(409);
  // Every route but liveness answers 503 while PostgreSQL or Temporal is down (api/middleware/error-envelope.ts,
  // outageGate); a command the workflow did not answer in time may still apply: 503, retry with the same key.
  if (rawPath !== '/health') errors.add(503);

  const status = String(doc.status ?? (method === 'delete' ? 204 : 200));
  const responses: Record<string, JsonSchema> = {};
  if (status === '204') responses[status] = { description: 'Done; no body' };
  else if (status === '303') responses[status] = { description: 'Redirect (Location) to the successUrl or cancelUrl' };
  else if (doc.produces)
    responses[status] = { description: 'Success', content: { [doc.produces]: { schema: { type: 'string' } } } };
  else if (enveloped) responses[status] = jsonResponse('Success', successEnvelope(doc, components));
  else responses[status] = { description: 'Success' };
  if (doc.alsoStatus)
    responses[String(doc.alsoStatus.status)] = jsonResponse(
      doc.alsoStatus.description,
      successEnvelope(doc, components),
    );
  for (const code of [...errors].sort((a, b) => a - b)) {
    const reason = code === 400 && keyRequired ? `${ERROR_REASONS[400]}; ${KEY_MISSING}` : ERROR_REASONS[code]!;
    // A route outside validate()/auth() may answer its refusals its own way (the sandbox's HTML pages).
    const response = enveloped
      ? jsonResponse(reason, { $ref: '#/components/schemas/ErrorEnvelope' })
      : { description: reason };
    if (code === 429 || code === 503) response.headers = { 'Retry-After': RETRY_AFTER_HEADER };
    responses[String(code)] = response;
  }
  op.responses = responses;
  return op;
}

function successEnvelope(doc: RouteDoc, components: Record<string, JsonSchema>): JsonSchema {
  const data = doc.response ? outputSchema(doc.response, components) : {};
  return { type: 'object', required: ['success', 'data'], properties: { success: { const: true }, data } };
}

function jsonResponse(description: string, schema: JsonSchema): JsonSchema {
  return { description, content: { 'application/json': { schema } } };
}

function pathParameters(rawPath: string, schema: Schemas['params']): JsonSchema[] {
  const json = schema ? inputSchema(schema) : undefined;
  const props = (json?.properties ?? {}) as Record<string, JsonSchema>;
  return [...rawPath.matchAll(/:([A-Za-z0-9_]+)/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: props[name!] ?? { type: 'string' },
  }));
}

function queryParameters(schema: Schemas['query']): JsonSchema[] {
  if (!schema) return [];
  const json = inputSchema(schema);
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries((json.properties ?? {}) as Record<string, JsonSchema>).map(([name, s]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema: s,
  }));
}
