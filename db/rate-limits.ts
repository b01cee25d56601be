import { createHash } from 'node:crypto';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Orm } from './orm';
import { AppError, rateLimited } from '../lib/errors';
import { groupCommit } from '../lib/group-commit';
import { logger } from '../lib/runtime/logger';

/** The table rate-limiter-flexible keeps its counters in (db/migrations/0011-rate-limits.ts). */
const RATE_LIMIT_TABLE = 'rate_limits';

/** One hit's verdict: allowed, or the milliseconds until the window resets. */
type Verdict = { allowed: true } | { allowed: false; msBeforeNext: number };

/**
 * A fixed-window limit counted in PostgreSQL, so every API instance shares it (rate-limiter-flexible,
 * one upsert on the ORM's own pool). Hits on one key that arrive while its upsert is in flight are
 * counted together by the next one (group commit): a busy client costs one upsert per round trip,
 * not one per request, and each hit still gets its own place in the count, so exactly the hits
 * past the limit are refused. If PostgreSQL cannot answer, each instance falls back to counting in
 * its memory rather than failing the request or letting everything through.
 */
export class RateLimiter {
  private readonly limiter: RateLimiterPostgres;
  private readonly limit: number;
  private readonly keys = new Map<string, (hit: null) => Promise<Verdict>>();

  constructor(orm: Orm, opts: { name: string; limit: number; windowSeconds: number }) {
    this.limit = opts.limit;
    this.limiter = new RateLimiterPostgres({
      storeClient: orm.em.getConnection().getKnex(),
      storeType: 'knex',
      tableName: RATE_LIMIT_TABLE,
      tableCreated: true,
      // Expired rows are deleted by whichever instance's timer fires; rows are tiny either way.
      clearExpiredByTimeout: true,
      keyPrefix: opts.name,
      points: opts.limit,
      duration: opts.windowSeconds,
      insuranceLimiter: new RateLimiterMemory({
        keyPrefix: opts.name,
        points: opts.limit,
        duration: opts.windowSeconds,
      }),
    });
  }

  /** Counts one request against `key`; throws 429 RATE_LIMITED (with the seconds to wait) when it is over. */
  async hit(key: string): Promise<void> {
    let counted = this.keys.get(key);
    if (!counted) {
      counted = groupCommit((hits: null[]) => this.count(key, hits.length), {
        maxBatch: 1000,
        onIdle: () => this.keys.delete(key),
      });
      this.keys.set(key, counted);
    }
    const verdict = await counted(null);
    if (!verdict.allowed) throw rateLimited(Math.max(1, Math.ceil(verdict.msBeforeNext / 1000)));
  }

  /** Counts `n` hits on `key` in one upsert; the i-th of them is the (total - n + 1 + i)-th of the window. */
  private async count(key: string, n: number): Promise<Verdict[]> {
    let res: RateLimiterRes;
    try {
      res = await this.limiter.consume(storedKey(key), n);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        logger.error({ err }, 'rate limiter failed');
        throw err;
      }
      res = err;
    }
    const first = res.consumedPoints - n + 1;
    return Array.from({ length: n }, (_, i) =>
      first + i <= this.limit ? { allowed: true } : { allowed: false, msBeforeNext: res.msBeforeNext },
    );
  }
}

/** Counts one request against each limiter and key; 429 with the longest wait when any is over. */
export async function hitAll(hits: [RateLimiter, string][]): Promise<void> {
  const outcomes = await Promise.allSettled(hits.map(([limiter, key]) => limiter.hit(key)));
  let wait = 0;
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') continue;
    const err: unknown = outcome.reason;
    if (!(err instanceof AppError) || err.code !== 'RATE_LIMITED') throw err;
    wait = Math.max(wait, (err.details as { retry_after_seconds: number }).retry_after_seconds);
  }
  if (wait > 0) throw rateLimited(wait);
}

// The key column is varchar(255); long keys (subjects from an identity provider) are hashed.
const storedKey = (key: string) =>
  key.length <= 200 ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
