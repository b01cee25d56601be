import type { JsonSchema } from './json-schema';

/** Documented on every authenticated POST; the rules are in api/middleware/idempotency.ts. */
export const IDEMPOTENCY_HEADER: JsonSchema = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Any unique string (1–255 printable ASCII). Kept 24 hours per caller, method and path: the same key with the same body answers the first answer again (header Idempotent-Replayed: true); with another body 409 IDEMPOTENCY_KEY_REUSED; while the first is still running 409 IDEMPOTENCY_KEY_IN_USE.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

/** On the routes that move money: without it the command is refused 400 IDEMPOTENCY_KEY_REQUIRED (decision 0373). */
export const REQUIRED_IDEMPOTENCY_HEADER: JsonSchema = {
  ...IDEMPOTENCY_HEADER,
  required: true,
  description: `Required: this command moves money, and without a key it is refused 400 IDEMPOTENCY_KEY_REQUIRED. ${IDEMPOTENCY_HEADER.description as string}`,
};

export const RETRY_AFTER_HEADER: JsonSchema = {
  description: 'Seconds to wait before retrying (with the same Idempotency-Key for a command)',
  schema: { type: 'string' },
};
