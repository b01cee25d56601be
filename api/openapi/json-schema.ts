import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/**
 * A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's own dialect), describing what a client sends
 * (`io: 'input'`): a coerced query number is documented as the number it must parse to, and a
 * refinement the generator cannot express (e.g. a money string's decimals) is left to the 422.
 */
export function inputSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** The body every successful JSON answer has (spec §4): what `data` holds is each resource's own. */
export const SUCCESS_ENVELOPE: JsonSchema = {
  type: 'object',
  required: ['success', 'data'],
  properties: { success: { const: true }, data: {} },
};

/** The one error envelope api/middleware/errors.ts answers with, whatever went wrong. */
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
        details: { description: 'Per-code detail, or null (VALIDATION_FAILED: the issues; RATE_LIMITED: retry_after_seconds)' },
      },
    },
  },
};

/** Why each error status can be answered; a route lists the ones that apply to it. */
export const ERROR_REASONS: Record<number, string> = {
  400: 'The body is not JSON',
  401: 'No valid bearer access token',
  403: 'The token lacks the role, organisation or KYC this needs',
  404: 'The resource does not exist or is not visible to the caller',
  409: 'The resource is not in a state that allows this',
  413: 'The body is larger than the configured limit',
  415: 'The body is not application/json',
  422: 'Path, query or body failed validation; details lists every issue',
  429: 'Too many requests from this client; see Retry-After',
};
