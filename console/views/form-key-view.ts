import { randomUUID } from 'node:crypto';
import { html, type Html } from '../../lib/html';

/** The hidden field's name; console/form-keys.ts reads it back. */
export const FORM_KEY_FIELD = 'idempotency_key';

/**
 * The Idempotency-Key a form that moves money or a secret carries, made as the form is rendered, or the
 * one it had when it is shown again for the same request (docs/decisions/0375-console-forms-carry-their-key.md).
 */
export function formKeyField(key: string = randomUUID()): Html {
  return html`<input type="hidden" name="${FORM_KEY_FIELD}" value="${key}">`;
}
