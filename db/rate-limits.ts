import { createHash } from 'node:crypto';
import type { Knex } from '@mikro-orm/postgresql';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Orm } from './orm';
import { preparedStatement } from './prepared';
import { AppError, rateLimited } from '../lib/errors';
import { groupCommit } from '../lib/group-commit';
import { logger } from '../lib/runtime/logger';

/** One hit's verdict: allowed, or the milliseconds until the window resets. */
type Verdict = { allowed: true } | { allowed: false; msBeforeNext: number };

const ALLOWED: Verdict = { allowed: true };

/** Points of one key this process took from the shared count and has not spent, until `expire` (ms since the epoch). */
interface Lease {
  left: number;
  expire: number;
  /** The shared count had reached the limit: it only grows until the window ends. */
  exhausted: boolean;
}

/**
 * Adds `points` to a key's count in its fixed window, or starts a new window: the rows and key format
 * rate-limiter-flexible's PostgreSQL store keeps (db/migrations/0011-rate-limits.ts), so an instance of an older
 * release counts in the same rows during a rolling upgrade. Times are the API's clock in ms, as that store's.
 */
const CONSUME = preparedStatement<{ points: number; expire: string }>(
  'rate-limit-consume',
  `insert into rate_limits as r (key, points, expire) values (?, ?, ?)
   on conflict (key) do update
     set points = case when r.expire <= ? then excluded.points else r.points + excluded.points end,
         expire = case when r.expire <= ? then excluded.expire else r.expire end
   returning points, expire`,
);

/** Rows of windows that ended an hour ago; the store deleted them every five minutes too. */
const CLEAR_EXPIRED = preparedStatement('rate-limit-clear-expired', 'delete from rate_limits where expire < ?');
const CLEAR_EVERY_MS = 5 * 60_000;

/** Keys with a lease at which this process drops the ended ones (a key per client address or subject). */
const LEASES_SWEPT_AT = 10_000;

/**
 * A fixed-window limit counted in PostgreSQL, so every API instance shares it
 * (docs/decisions/0430-write-limit-leased.md). An instance takes a few of a key's points at a time (a lease: a
 * twentieth of the limit, at most 100) and spends them from memory, so a busy client costs one upsert per lease,
 * not one per request, and most requests wait for no statement. Hits that find no lease left while an upsert is in
 * flight are counted together by the next (group commit). Each hit gets its own place in the count: within one
 * instance exactly the hits past the limit are refused; across instances a client may be refused up to the
 * points the other instances hold unspent. A key found spent is refused from memory until its window ends. If
 * PostgreSQL cannot answer, each instance counts in its memory rather than failing the request or letting
 * everything through.
 */
export class RateLimiter {
  private readonly knex: () => Knex;
  private readonly prefix: string;
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly leaseSize: number;
  private readonly leases = new Map<string, Lease>();
  private readonly takers = new Map<string, (hit: null) => Promise<Verdict>>();
  private readonly insurance: RateLimiterMemory;

  constructor(orm: Orm, opts: { name: string; limit: number; windowSeconds: number }) {
    this.knex = () => orm.em.getConnection().getKnex();
    this.prefix = opts.name;
    this.limit = opts.limit;
    this.windowMs = opts.windowSeconds * 1000;
    this.leaseSize = Math.min(100, Math.max(1, Math.floor(opts.limit / 20)));
    this.insurance = new RateLimiterMemory({ keyPrefix: opts.name, points: opts.limit, duration: opts.windowSeconds });
    setInterval(() => {
      CLEAR_EXPIRED(this.knex(), [Date.now() - 3_600_000]).catch(() => undefined);
    }, CLEAR_EVERY_MS).unref();
  }

  /** Counts one request against `key`; throws 429 RATE_LIMITED (with the seconds to wait) when it is over. */
  async hit(key: string): Promise<void> {
    const spent = this.spend(key);
    const verdict = spent ?? (await this.takerOf(key)(null));
    if (!verdict.allowed) throw rateLimited(Math.max(1, Math.ceil(verdict.msBeforeNext / 1000)));
  }

  /** A verdict from this process's lease, or undefined when the lease is gone and the shared count must be asked. */
  private spend(key: string): Verdict | undefined {
    const lease = this.leases.get(key);
    if (!lease) return undefined;
    const now = Date.now();
    if (lease.expire <= now) {
      this.leases.delete(key);
      return undefined;
    }
    if (lease.left > 0) {
      lease.left--;
      return ALLOWED;
    }
    return lease.exhausted ? { allowed: false, msBeforeNext: lease.expire - now } : undefined;
  }

  private takerOf(key: string) {
    let taker = this.takers.get(key);
    if (!taker) {
      taker = groupCommit((hits: null[]) => this.take(key, hits.length), {
        maxBatch: 1000,
        onIdle: () => this.takers.delete(key),
      });
      this.takers.set(key, taker);
    }
    return taker;
  }

  /** Verdicts for `n` hits on `key`: from a lease the last upsert left, else from a new one. */
  private async take(key: string, n: number): Promise<Verdict[]> {
    const verdicts: Verdict[] = [];
    while (verdicts.length < n) {
      const spent = this.spend(key);
      if (!spent) break;
      verdicts.push(spent);
    }
    const need = n - verdicts.length;
    if (need === 0) return verdicts;
    const want = Math.max(need, this.leaseSize);
    let points: number;
    let expire: number;
    try {
      const now = Date.now();
      const [row] = await CONSUME(this.knex(), [
        `${this.prefix}:${storedKey(key)}`,
        want,
        now + this.windowMs,
        now,
        now,
      ]);
      points = Number(row!.points);
      expire = Number(row!.expire);
    } catch (err) {
      logger.error({ err }, 'rate limiter failed; counting in memory');
      return [...verdicts, ...(await this.inMemory(key, need))];
    }
    // The i-th point of this upsert is the (points - want + 1 + i)-th of the window.
    const granted = Math.max(0, Math.min(want, this.limit - (points - want)));
    const msBeforeNext = Math.max(0, expire - Date.now());
    for (let i = 0; i < need; i++) verdicts.push(i < granted ? ALLOWED : { allowed: false, msBeforeNext });
    this.keep(key, { left: Math.max(0, granted - need), expire, exhausted: points >= this.limit });
    return verdicts;
  }

  private keep(key: string, lease: Lease): void {
    if (this.leases.size >= LEASES_SWEPT_AT) {
      const now = Date.now();
      for (const [k, l] of this.leases) if (l.expire <= now) this.leases.delete(k);
    }
    this.leases.set(key, lease);
  }

  private async inMemory(key: string, n: number): Promise<Verdict[]> {
    let res: RateLimiterRes;
    try {
      res = await this.insurance.consume(key, n);
    } catch (refused) {
      if (!(refused instanceof RateLimiterRes)) throw refused;
      res = refused;
    }
    const first = res.consumedPoints - n + 1;
    return Array.from({ length: n }, (_, i) =>
      first + i <= this.limit ? ALLOWED : { allowed: false, msBeforeNext: res.msBeforeNext },
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
