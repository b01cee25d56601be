/**
 * The retry schedule (spec §6.5) and how an endpoint's Retry-After lengthens it: the one home of
 * both, for the engine's first attempts and the delivery workflow's later ones. Pure rules.
 */

// spec §6.5: delay before attempts 1..8, each counted from the end of the previous attempt.
export const ATTEMPT_DELAYS_MS = [0, 30_000, 120_000, 900_000, 3_600_000, 14_400_000, 43_200_000, 86_400_000] as const;
export const AUTOMATIC_ATTEMPTS = ATTEMPT_DELAYS_MS.length;

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
