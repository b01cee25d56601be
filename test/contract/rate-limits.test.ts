import { randomUUID } from 'node:crypto';
import type { Knex } from '@mikro-orm/postgresql';
import { loadConfig } from '../../lib/runtime/config';
import { openOrm, type Orm } from '../../db/orm';
import { RateLimiter } from '../../db/rate-limits';
import { freshDatabase } from '../support/service';

/**
 * The write limit on the real PostgreSQL (db/rate-limits.ts, docs/decisions/0430-write-limit-leased.md): each
 * instance spends points it leased from the shared count, so a busy client costs a statement per lease; the shared
 * count still lets no more than the limit through, however the hits fall on instances.
 */
describe('RateLimiter', () => {
  let orm: Orm;
  let knex: Knex;

  beforeAll(async () => {
    const config = loadConfig({ ...process.env, NODE_ENV: 'test', DATABASE_URL: await freshDatabase() });
    orm = await openOrm(config);
    knex = orm.em.getConnection().getKnex();
  }, 60_000);

  afterAll(() => orm?.close());

  const limiter = (limit: number, name = `t${randomUUID().slice(0, 8)}`) =>
    new RateLimiter(orm, { name, limit, windowSeconds: 60 });

  /** Each hit's outcome: 'ok' or the 429's retry_after_seconds. */
  const outcomes = (hits: Promise<void>[]) =>
    Promise.all(
      hits.map((h) =>
        h.then(
          () => 'ok' as const,
          (err: { code?: string; details?: { retry_after_seconds: number } }) => {
            expect(err.code).toBe('RATE_LIMITED');
            return err.details!.retry_after_seconds;
          },
        ),
      ),
    );

  async function statementsOf<T>(work: () => Promise<T>): Promise<[T, number]> {
    const spy = jest.spyOn(knex.client as { acquireConnection(): Promise<unknown> }, 'acquireConnection');
    try {
      return [await work(), spy.mock.calls.length];
    } finally {
      spy.mockRestore();
    }
  }

  it('lets exactly the limit through one instance, one at a time or together, and says how long to wait', async () => {
    const one = limiter(120);
    const [first, statements] = await statementsOf(async () => {
      const seen = [];
      for (let i = 0; i < 50; i++) seen.push(...(await outcomes([one.hit('client')])));
      return seen;
    });
    expect(first.every((o) => o === 'ok')).toBe(true);
    // 120 / 20 = 6 points a lease: 50 hits one after another take 9 statements, not 50.
    expect(statements).toBe(9);
    const rest = await outcomes(Array.from({ length: 100 }, () => one.hit('client')));
    expect(rest.filter((o) => o === 'ok')).toHaveLength(70);
    const refused = rest.filter((o) => o !== 'ok') as number[];
    expect(refused).toHaveLength(30);
    for (const wait of refused) (expect(wait).toBeGreaterThanOrEqual(1), expect(wait).toBeLessThanOrEqual(60));
    // Spent: later hits are refused from memory, without a statement, until the window ends.
    const [late, lateStatements] = await statementsOf(() => outcomes([one.hit('client'), one.hit('client')]));
    expect(late.every((o) => o !== 'ok')).toBe(true);
    expect(lateStatements).toBe(0);
    // Another key has its own count.
    expect(await outcomes([one.hit('other')])).toEqual(['ok']);
  });

  it('never lets more than the limit through three instances sharing the count', async () => {
    const name = `shared${randomUUID().slice(0, 8)}`;
    const instances = [limiter(100, name), limiter(100, name), limiter(100, name)];
    const hits = Array.from({ length: 300 }, (_, i) => instances[i % 3]!.hit('client'));
    const seen = await outcomes(hits);
    const passed = seen.filter((o) => o === 'ok').length;
    // At most the limit; at least the limit less what the other two may hold unspent (a lease of 5 each, less one).
    expect(passed).toBeLessThanOrEqual(100);
    expect(passed).toBeGreaterThanOrEqual(100 - 2 * 4);
  });

  it('counts in the rows an older release counts in, so instances of both share one limit during an upgrade', async () => {
    const name = `mixed${randomUUID().slice(0, 8)}`;
    // An older release's upsert (rate-limiter-flexible's) took 97 of 100 points in this window.
    await knex.raw('insert into rate_limits (key, points, expire) values (?, 97, ?)', [
      `${name}:client`,
      Date.now() + 60_000,
    ]);
    const one = limiter(100, name);
    const seen = await outcomes(Array.from({ length: 5 }, () => one.hit('client')));
    expect(seen.filter((o) => o === 'ok')).toHaveLength(3);
  });

  it('starts a new window once the last has ended', async () => {
    const name = `ended${randomUUID().slice(0, 8)}`;
    await knex.raw('insert into rate_limits (key, points, expire) values (?, 100, ?)', [
      `${name}:client`,
      Date.now() - 1,
    ]);
    expect(await outcomes([limiter(100, name).hit('client')])).toEqual(['ok']);
    const [row] = (await knex.raw('select points from rate_limits where key = ?', [`${name}:client`])).rows;
    expect(Number(row.points)).toBe(5);
  });
});
