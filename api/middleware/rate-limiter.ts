import { createHash } from 'node:crypto';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Orm } from '../../db/orm';
import { AppError, rateLimited } from '../../lib/errors';
import { logger } from '../../lib/logger';

/** The table rate-limiter-flexible keeps its counters in (db/migrations/0011-rate-limits.ts). */
const RATE_LIMIT_TABLE = 'rate_limits';

/**
 * A fixed-window limit counted in PostgreSQL, so every API instance shares it (rate-limiter-flexible,
 * one upsert per hit on the ORM's own pool). If PostgreSQL cannot answer, each instance falls back
 * to counting in its memory rather than failing the request or letting everything through.
 */
export class RateLimiter {
  private readonly limiter: RateLimiterPostgres;

  constructor(orm: Orm, opts: { name: string; limit: number; windowSeconds: number }) {
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
    try {
      await this.limiter.consume(storedKey(key));
    } catch (err) {
      if (err instanceof RateLimiterRes) throw rateLimited(Math.max(1, Math.ceil(err.msBeforeNext / 1000)));
      logger.error({ err }, 'rate limiter failed');
      throw err;
    }
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
