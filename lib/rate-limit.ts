import { rateLimited } from './errors';

/**
 * A fixed-window counter per key, in this process's memory. With several API instances each
 * counts on its own, so the effective limit is `limit x instances` (docs/decisions.md).
 */
export class RateLimiter {
  private readonly windows = new Map<string, { startedAt: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request for every key; throws 429 RATE_LIMITED when any of them is over the limit. */
  hit(...keys: string[]): void {
    const now = this.now();
    if (this.windows.size > 10_000) this.evictExpired(now);
    let retryAfterMs = 0;
    for (const key of keys) {
      let w = this.windows.get(key);
      if (!w || now - w.startedAt >= this.windowMs) {
        w = { startedAt: now, count: 0 };
        this.windows.set(key, w);
      }
      w.count += 1;
      if (w.count > this.limit) retryAfterMs = Math.max(retryAfterMs, w.startedAt + this.windowMs - now);
    }
    if (retryAfterMs > 0) throw rateLimited(Math.max(1, Math.ceil(retryAfterMs / 1000)));
  }

  private evictExpired(now: number): void {
    for (const [key, w] of this.windows) if (now - w.startedAt >= this.windowMs) this.windows.delete(key);
  }
}
