import { randomUUID } from 'node:crypto';
import type { ApiAnswer } from './api-client';
import { FORM_KEY_FIELD } from './views/form-key-view';

/**
 * Every console form that moves money or a secret (a refund, a reconciliation, a signing secret made
 * or rotated) carries an Idempotency-Key made when the form was rendered, and the console sends the
 * command under it: the form sent twice (a double click, a resubmit of the page) is one command, and
 * the second submission gets the first one's answer (docs/decisions/0375-console-forms-carry-their-key.md).
 * The field itself is rendered by console/views/form-key-view.ts.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The key the form was rendered with; null when it carries none (a page from before keys) or not one of ours. */
export function formKeyOf(body: unknown): string | null {
  const value = (body as Record<string, unknown> | undefined)?.[FORM_KEY_FIELD];
  return typeof value === 'string' && UUID.test(value) ? value : null;
}

/**
 * The key the form is shown again with after `answer`: the same one when the command may still apply
 * (an outage, a twin still running), so sending it again asks after the same command; a new one when
 * the answer is final (a refusal), so the corrected form is a new request.
 */
export function keyAfter(answer: ApiAnswer, key: string): string {
  return answer.status >= 500 || answer.error?.code === 'IDEMPOTENCY_KEY_IN_USE' ? key : randomUUID();
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends a keyed command. While the same form's other submission still runs under the key (409
 * IDEMPOTENCY_KEY_IN_USE), asks again every quarter second until it has answered, then answers what it
 * answered (the API replays it), for at most `waitMs`: after that the 409 is the answer.
 */
export async function sendOnce<T>(send: () => Promise<ApiAnswer<T>>, waitMs: number): Promise<ApiAnswer<T>> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const answer = await send();
    if (answer.error?.code !== 'IDEMPOTENCY_KEY_IN_USE' || Date.now() >= deadline) return answer;
    await pause(250);
  }
}
