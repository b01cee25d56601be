import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/**
 * A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's own dialect), describing what a client sends
 * (`io: 'input'`): a coerced query number is documented as the number it must parse to, and a
 * refinement the generator cannot express (e.g. a money string's decimals) is left to the 422.
 */
export function inputSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    unrepresentable: 'any',
  }) as JsonSchema;
  return rest;
}

/**
 * A zod view as JSON Schema describing what the service sends (`io: 'output'`). Views named with
 * `.meta({ id })` are hoisted into `components` (shared by reference), so a generated client gets
 * one type per view.
 */
export function outputSchema(schema: z.ZodType, components: Record<string, JsonSchema>): JsonSchema {
  const {
    $schema: _dialect,
    $defs,
    ...rest
  } = z.toJSONSchema(schema, { io: 'output', target: 'draft-2020-12', unrepresentable: 'any' }) as JsonSchema;
  for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>))
    components[id] = toComponentRefs(def) as JsonSchema;
  return toComponentRefs(rest) as JsonSchema;
}

function toComponentRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toComponentRefs);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' ? v.replace('#/$defs/', '#/components/schemas/') : toComponentRefs(v),
    ]),
  );
}

/** The one error envelope api/middleware/error-envelope.ts answers with, whatever went wrong. */
export const ERROR_ENVELOPE: JsonSchema = {
  type: 'object',
  required: ['success', 'error'],
  properties: {
    success: { const: false },
    error: {
      type: 'object',
      required: ['code', 'message', 'details'],
      properties: {
        code: { type: 'string', description: 'Stable machine-readable code, e.g. VALIDATION_FAILED, RATE_LIMITED' },
        message: { type: 'string' },
        details: {
          description: 'Per-code detail, or null (VALIDATION_FAILED: the issues; RATE_LIMITED: retry_after_seconds)',
        },
      },
    },
  },
};

/** Why each error status can be answered; a route lists the ones that apply to it. */
export const ERROR_REASONS: Record<number, string> = {
  400: 'The body is not JSON, or nests objects and arrays deeper than 32 levels (BODY_TOO_DEEP)',
  401: 'No valid bearer access token',
  403: 'The token lacks the role, organisation or KYC this needs',
  404: 'The resource does not exist or is not visible to the caller',
  409: 'The resource is not in a state that allows this, or the Idempotency-Key was used with another body, is still in use, or keeps an answer holding a secret for the caller with other roles',
  413: 'The body is larger than the configured limit',
  415: 'The body is not application/json',
  422: 'Path, query or body failed validation; details lists every issue',
  429: 'Too many requests from this client; see Retry-After',
  503: 'SERVICE_UNAVAILABLE: PostgreSQL or Temporal cannot be reached (details.dependency names which); retry after Retry-After. On a command also COMMAND_OUTCOME_UNKNOWN: the command was sent but not answered in time and may still apply; retry after Retry-After with the same Idempotency-Key to get its real result',
};
