import { randomUUID } from 'node:crypto';
import type { Knex } from '@mikro-orm/postgresql';
import { loadConfig } from '../../lib/runtime/config';
import { openOrm, type Orm } from '../../db/orm';
import { preparedStatement, preparedTransaction } from '../../db/prepared';
import { freshDatabase } from '../support/service';

/** The claim round's transaction (db/prepared.ts) on the real PostgreSQL: it commits, rolls back, and drops a broken connection. */
describe('preparedTransaction', () => {
  let orm: Orm;
  let knex: Knex;
  let poolMax: number;
  const insert = preparedStatement<{ key: string }>(
    'test-prepared-insert',
    `insert into rate_limits (key, points, expire) values (?, 1, 0) returning key`,
  );
  const backend = preparedStatement<{ pid: number; xid: string | null }>(
    'test-prepared-backend',
    'select pg_backend_pid() as pid, pg_current_xact_id_if_assigned()::text as xid',
  );
  const stored = async (key: string) => (await knex('rate_limits').where({ key }).count({ n: '*' }))[0]!.n;

  beforeAll(async () => {
    const config = loadConfig({ ...process.env, NODE_ENV: 'test', DATABASE_URL: await freshDatabase() });
    poolMax = config.DATABASE_POOL_MAX;
    orm = await openOrm(config);
    knex = orm.em.getConnection().getKnex();
  }, 60_000);

  afterAll(() => orm?.close());

  it('runs every statement on one connection, in one transaction, and commits when the work resolves', async () => {
    const key = `t-${randomUUID()}`;
    const seen = await preparedTransaction(knex, async (trx) => {
      await insert(trx, [key]);
      return [await backend(trx, []), await backend(trx, [])];
    });
    expect(seen[0]![0]!.pid).toBe(seen[1]![0]!.pid);
    expect(seen[0]![0]!.xid).not.toBeNull();
    expect(seen[1]![0]!.xid).toBe(seen[0]![0]!.xid);
    expect(Number(await stored(key))).toBe(1);
  });

  it('rolls back and rethrows when the work throws, and the connection serves the next caller', async () => {
    const key = `t-${randomUUID()}`;
    const failure = new Error('the work failed');
    await expect(
      preparedTransaction(knex, async (trx) => {
        await insert(trx, [key]);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(Number(await stored(key))).toBe(0);
    // No transaction is left open on any pooled connection.
    const open = await knex.raw(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`,
    );
    expect(open.rows[0].n).toBe(0);
  });

  it('runs each statement on its generic plan, planned once per connection, and leaves the setting behind at commit', async () => {
    // PostgreSQL plans a prepared statement's first five runs for their values and keeps doing so when its
    // generic plan's estimate is higher than theirs: the claim's take was planned on every call (2 ms) once
    // the tables had grown (docs/decisions/0341-claim-plans-generic.md).
    const key = `t-${randomUUID()}`;
    const { pid, plans } = await preparedTransaction(knex, async (trx) => {
      for (let i = 0; i < 6; i++) await insert(trx, [`${key}-${i}`]);
      const pid = (await backend(trx, []))[0]!.pid;
      const { rows } = await trx.connection.query(
        `select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where name = 'test-prepared-insert'`,
      );
      return { pid, plans: rows[0] as { generic: number; custom: number } };
    });
    expect(plans.custom).toBe(0);
    expect(plans.generic).toBeGreaterThanOrEqual(6);
    // The connection it used (taken again from the pool, holding the others until it comes) is back on
    // the server's own choice, as is every other.
    const client = knex.client as {
      acquireConnection(): Promise<{ query(q: string): Promise<{ rows: { pid: number; mode: string }[] }> }>;
      releaseConnection(c: unknown): Promise<void>;
    };
    const held: Awaited<ReturnType<typeof client.acquireConnection>>[] = [];
    const seen: { pid: number; mode: string }[] = [];
    try {
      while (!seen.some((s) => s.pid === pid) && held.length < poolMax) {
        const c = await client.acquireConnection();
        held.push(c);
        seen.push(
          (await c.query(`select pg_backend_pid() as pid, current_setting('plan_cache_mode') as mode`)).rows[0]!,
        );
      }
    } finally {
      await Promise.all(held.map((c) => client.releaseConnection(c)));
    }
    expect(seen.map((s) => s.pid)).toContain(pid);
    expect(seen.map((s) => s.mode)).toEqual(seen.map(() => 'auto'));
  });

  it('does not hand a connection whose rollback failed back to anyone', async () => {
    let lost = 0;
    await expect(
      preparedTransaction(knex, async (trx) => {
        lost = (await backend(trx, []))[0]!.pid;
        await trx.connection.query('select pg_terminate_backend(pg_backend_pid())');
      }),
    ).rejects.toThrow();
    // Every connection the pool hands out next is a live one, none the terminated backend.
    const pids = await Promise.all(
      Array.from({ length: 4 }, () => preparedTransaction(knex, async (trx) => (await backend(trx, []))[0]!.pid)),
    );
    expect(pids).not.toContain(lost);
    expect(pids.every((pid) => pid > 0)).toBe(true);
  });
});
