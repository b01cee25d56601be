import { disableReason } from '../../domain/endpoint-health';
import { nextAttemptDelay, parseRetryAfter } from '../../domain/retry-schedule';

const now = new Date('2026-11-23T12:00:00Z');
const HOUR = 3600_000;
const DAY = 24 * HOUR;

describe('Retry-After (honoured when longer than the schedule, capped)', () => {
  it('reads delay-seconds and HTTP-dates', () => {
    expect(parseRetryAfter('120', now, DAY)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now, DAY)).toBe(0);
    expect(parseRetryAfter('Mon, 23 Nov 2026 13:30:00 GMT', now, DAY)).toBe(1.5 * HOUR);
  });

  it('caps what it asks for, and treats a date in the past as no wait', () => {
    expect(parseRetryAfter('999999999', now, DAY)).toBe(DAY);
    expect(parseRetryAfter('Sat, 01 Jan 2050 00:00:00 GMT', now, 6 * HOUR)).toBe(6 * HOUR);
    expect(parseRetryAfter('Sun, 22 Nov 2026 12:00:00 GMT', now, DAY)).toBe(0);
  });

  it('ignores what is not a Retry-After value', () => {
    for (const bad of [
      undefined,
      null,
      '',
      '-5',
      '1.5',
      '+30',
      'soon',
      '2026-11-23T13:00:00Z',
      'Mon, 99 Nov 2026 99:00:00 GMT',
    ]) {
      expect({ bad, got: parseRetryAfter(bad, now, DAY) }).toEqual({ bad, got: null });
    }
  });

  it('lengthens the next delay on 429 and 503 only, never shortens it, and never adds an attempt', () => {
    expect(nextAttemptDelay(30_000, 429, 600_000)).toBe(600_000);
    expect(nextAttemptDelay(30_000, 503, 600_000)).toBe(600_000);
    expect(nextAttemptDelay(HOUR, 503, 60_000)).toBe(HOUR);
    expect(nextAttemptDelay(30_000, 500, 600_000)).toBe(30_000);
    expect(nextAttemptDelay(30_000, null, 600_000)).toBe(30_000);
    expect(nextAttemptDelay(30_000, 429, null)).toBe(30_000);
    expect(nextAttemptDelay(null, 429, 600_000)).toBeNull(); // after the 8th attempt: exhausted, as before
  });
});

describe('auto-disable rules', () => {
  it('disables on 410 Gone at once and after failing every attempt for the period', () => {
    expect(disableReason(410, null, now, 5 * DAY)).toBe('gone');
    expect(disableReason(500, new Date(now.getTime() - 5 * DAY), now, 5 * DAY)).toBe('failing');
    expect(disableReason(500, new Date(now.getTime() - 5 * DAY + 1), now, 5 * DAY)).toBeNull();
    expect(disableReason(null, null, now, 5 * DAY)).toBeNull();
  });
});
