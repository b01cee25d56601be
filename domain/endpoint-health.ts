/**
 * When a webhook endpoint's answers change its schedule or its status (issue 12). Pure rules, so
 * the delivery engine applies them and tests state them without a clock or a database.
 */

/** Why an endpoint was disabled: a 410 Gone, every attempt failing too long, or a person. */
export type DisableReason = 'gone' | 'failing' | 'manual';

/** Answers that may carry a Retry-After the schedule honours (RFC 9110 §10.2.3). */
const RETRY_AFTER_STATUSES = new Set([429, 503]);

/**
 * The wait a Retry-After header asks for, in ms, at most `capMs`; null when absent or unreadable.
 * It is either delay-seconds (digits only) or an HTTP-date; a date in the past asks for no wait.
 */
export function parseRetryAfter(header: string | null | undefined, now: Date, capMs: number): number | null {
  const value = header?.trim();
  if (!value) return null;
  let ms: number;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else {
    // An HTTP-date names its weekday and zone; a bare number with a sign or a fraction is not one.
    if (!/^[A-Za-z]{3},/.test(value)) return null;
    const at = Date.parse(value);
    if (Number.isNaN(at)) return null;
    ms = at - now.getTime();
  }
  return Math.min(Math.max(ms, 0), capMs);
}

/**
 * The delay before the next attempt: the spec's schedule (§6.5), lengthened, never shortened, by
 * a capped Retry-After on 429 or 503. No next attempt (null) stays none: the 8 attempts are kept.
 */
export function nextAttemptDelay(
  scheduleMs: number | null,
  status: number | null,
  retryAfterMs: number | null,
): number | null {
  if (scheduleMs === null) return null;
  if (status === null || !RETRY_AFTER_STATUSES.has(status) || retryAfterMs === null) return scheduleMs;
  return Math.max(scheduleMs, retryAfterMs);
}

/** The endpoint's new "failing since": cleared by a success, set by the first failure after one. */
export function failingSince(current: Date | null, ok: boolean, attemptedAt: Date): Date | null {
  if (ok) return null;
  return current ?? attemptedAt;
}

/** Whether an endpoint's answers disable it: a 410 Gone at once, or failing every attempt for `periodMs`. */
export function disableReason(
  status: number | null,
  since: Date | null,
  now: Date,
  periodMs: number,
): DisableReason | null {
  if (status === 410) return 'gone';
  if (since && now.getTime() - since.getTime() >= periodMs) return 'failing';
  return null;
}
