import { randomUUID } from 'node:crypto';
import type { Knex } from '@mikro-orm/postgresql';
import { loadConfig } from '../../lib/runtime/config';
import { openOrm, type Orm } from '../../db/orm';
import { preparedStatement, preparedTransaction, runPrepared } from '../../db/prepared';
import { freshDatabase } from '../support/service';

/**
 * The claim round's transaction (db/prepared.ts) on the real PostgreSQL: one round trip per statement, the
 * first with its `begin` and the last with its `commit`; it rolls back, drops a connection it cannot trust, and
 * passes any value through intact.
 */
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
  const terminate = preparedStatement('test-prepared-terminate', 'select pg_terminate_backend(pg_backend_pid())');
  const plans = preparedStatement<{ generic: number; custom: number }>(
    'test-prepared-plans',
    `select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where name = ?`,
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
      await trx.run(insert, [key]);
      return [await trx.run(backend, []), await trx.run(backend, [])];
    });
    expect(seen[0]![0]!.pid).toBe(seen[1]![0]!.pid);
    expect(seen[0]![0]!.xid).not.toBeNull();
    expect(seen[1]![0]!.xid).toBe(seen[0]![0]!.xid);
    expect(Number(await stored(key))).toBe(1);
  });

  it('sends one round trip per statement: the first carries the begin, the last the commit', async () => {
    const key = `t-${randomUUID()}`;
    const client = knex.client as { acquireConnection(): Promise<{ query(q: unknown): Promise<unknown> }> };
    const original = client.acquireConnection.bind(client);
    let sent: jest.SpyInstance | undefined;
    const acquire = jest.spyOn(client, 'acquireConnection').mockImplementationOnce(async () => {
      const connection = await original();
      sent = jest.spyOn(connection, 'query');
      return connection;
    });
    try {
      const seen = await preparedTransaction(knex, async (trx) => {
        await trx.run(insert, [key]);
        const before = Number(await stored(key));
        await trx.runAndCommit(backend, []);
        return { before, after: Number(await stored(key)) };
      });
      // Another connection sees the row once the last statement has answered, not before.
      expect(seen).toEqual({ before: 0, after: 1 });
      const texts = sent!.mock.calls.map(([q]) => String(q));
      expect(texts).toHaveLength(2);
      expect(texts[0]).toMatch(
        /^begin;\nset local plan_cache_mode = force_generic_plan;\n(prepare test_prepared_insert as .*;\n)?execute test_prepared_insert\('t-/s,
      );
      expect(texts[1]).toMatch(/execute test_prepared_backend;\ncommit$/);
    } finally {
      sent?.mockRestore();
      acquire.mockRestore();
    }
  });

  it('passes every kind of value through as it was, whatever it holds', async () => {
    const echo = preparedStatement<Record<string, unknown>>(
      'test-prepared-echo',
      'select ?::text as s, ?::jsonb as j, ?::text[] as a, ?::int as i, ?::float8 as f, ?::boolean as b, ?::timestamptz as t, ?::text as n',
    );
    const hostile = `it's a \\ "quote"'); drop table rate_limits; --\n\u00e9`;
    const json = { quote: 'o\'k \\ "x"', nested: [1, "'; --"] };
    const ids = ['a,b', 'c"d', 'e\\f', "g'h", '', 'NULL', '{x}'];
    const when = new Date('2026-11-29T07:30:00.123Z');
    const values = [hostile, JSON.stringify(json), ids, -7, 2.5, true, when, null];
    const [row] = await preparedTransaction(knex, (trx) => trx.runAndCommit(echo, values));
    // timestamptz comes back as the driver's text, here as from any statement.
    expect({ ...row, t: new Date(row!.t as string) }).toEqual({
      s: hostile,
      j: json,
      a: ids,
      i: -7,
      f: 2.5,
      b: true,
      t: when,
      n: null,
    });
    // Run on its own, the same statement gives the same row.
    expect((await echo(knex, values))[0]).toEqual(row);
    // What has no literal is refused before anything is sent.
    await expect(preparedTransaction(knex, (trx) => trx.run(echo, [...values.slice(0, 7), { a: 1 }]))).rejects.toThrow(
      TypeError,
    );
    await expect(
      preparedTransaction(knex, (trx) => trx.run(echo, [hostile, '{}', [1], ...values.slice(3)])),
    ).rejects.toThrow(TypeError);
    // A NUL would end the statement's text where it stands: refused, in a string or an array's element.
    for (const nul of [
      [`${hostile}\u0000x`, ...values.slice(1)],
      [hostile, '{}', ['a', 'b\u0000'], ...values.slice(3)],
    ])
      await expect(preparedTransaction(knex, (trx) => trx.run(echo, nul))).rejects.toThrow(/NUL/);
  });

  it('does not reuse a connection whose statement failed while it was being prepared', async () => {
    // Whether a failed script's `prepare` stayed on the session is not known; one that stayed would make the
    // next `prepare` of that name on the connection fail, every time.
    const divide = preparedStatement<{ x: number }>('test-prepared-divide', 'select 10 / ?::int as x');
    let failed = 0;
    await expect(
      preparedTransaction(knex, async (trx) => {
        failed = (await trx.run(backend, []))[0]!.pid;
        await trx.run(divide, [0]);
      }),
    ).rejects.toThrow(/division by zero/);
    const seen = await Promise.all(
      Array.from({ length: 4 }, () =>
        preparedTransaction(knex, async (trx) => ({
          pid: (await trx.run(backend, []))[0]!.pid,
          x: (await trx.runAndCommit(divide, [5]))[0]!.x,
        })),
      ),
    );
    expect(seen.map((s) => s.x)).toEqual([2, 2, 2, 2]);
    expect(seen.map((s) => s.pid)).not.toContain(failed);
  });

  it('rolls back and rethrows when the work throws, and the connection serves the next caller', async () => {
    const key = `t-${randomUUID()}`;
    const failure = new Error('the work failed');
    await expect(
      preparedTransaction(knex, async (trx) => {
        await trx.run(insert, [key]);
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
    const { pid, counts } = await preparedTransaction(knex, async (trx) => {
      for (let i = 0; i < 6; i++) await trx.run(insert, [`${key}-${i}`]);
      const pid = (await trx.run(backend, []))[0]!.pid;
      return { pid, counts: (await trx.run(plans, [insert.sqlName]))[0]! };
    });
    expect(counts.custom).toBe(0);
    expect(counts.generic).toBeGreaterThanOrEqual(6);
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

  it('runs a statement on its own on its generic plan, in one round trip; inside a transaction, on that transaction', async () => {
    // The `workflow` shape's statements for each delivery were planned for their values on every call:
    // 40% of PostgreSQL's CPU at 50 deliveries/s (docs/decisions/0353-workflow-shape-statements-planned-once.md).
    // This one reads its own plan counts on the connection it runs on, as it runs.
    const self = preparedStatement<{ generic: number; custom: number }>(
      'test-prepared-self',
      `select generic_plans::int as generic, custom_plans::int as custom
         from pg_prepared_statements where name in ('test_prepared_self', 'test-prepared-self') and ?::uuid is not null`,
    );
    for (let i = 0; i < 8; i++) {
      const [counts] = await runPrepared(knex, self, [randomUUID()]);
      expect(counts!.custom).toBe(0);
      expect(counts!.generic).toBeGreaterThanOrEqual(1);
    }
    // Inside the caller's transaction it runs there: it sees the transaction's own uncommitted row.
    const key = `t-${randomUUID()}`;
    const probe = preparedStatement<{ n: number }>(
      'test-prepared-probe',
      'select count(*)::int as n from rate_limits where key = ?',
    );
    const inside = await knex.transaction(async (trx) => {
      await trx('rate_limits').insert({ key, points: 1, expire: 0 });
      return (await runPrepared(trx, probe, [key]))[0]!.n;
    });
    expect(inside).toBe(1);
    expect((await runPrepared(knex, probe, [key]))[0]!.n).toBe(1);
  });

  it('does not hand a connection whose rollback failed back to anyone', async () => {
    let lost = 0;
    await expect(
      preparedTransaction(knex, async (trx) => {
        lost = (await trx.run(backend, []))[0]!.pid;
        await trx.run(terminate, []);
      }),
    ).rejects.toThrow();
    // Every connection the pool hands out next is a live one, none the terminated backend.
    const pids = await Promise.all(
      Array.from({ length: 4 }, () => preparedTransaction(knex, async (trx) => (await trx.run(backend, []))[0]!.pid)),
    );
    expect(pids).not.toContain(lost);
    expect(pids.every((pid) => pid > 0)).toBe(true);
  });
});
