import type { Knex } from '@mikro-orm/postgresql';

interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] } | string): Promise<{ rows: unknown[] }>;
  /** knex's pool drops a connection that carries this when it is next acquired. */
  __knex__disposed?: unknown;
}

interface Pool {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(c: PgConnection): Promise<void>;
}

/** One pooled connection inside a transaction that `preparedTransaction` opened. */
export class HeldTransaction {
  constructor(readonly connection: PgConnection) {}
}

/**
 * A statement PostgreSQL prepares once per connection and then only executes: for the delivery
 * engine's hot statements, whose planning cost as much as running them (pg_stat_statements: the
 * publish statement 0.5 ms to plan, 0.5 ms to run; a claim 1.7 ms to plan). Written with `?`
 * placeholders like the rest of the code; runs on the transaction's connection when given one.
 */
export function preparedStatement<R>(name: string, sql: string) {
  let n = 0;
  const text = sql.replace(/\?/g, () => `$${++n}`);
  return async (db: Knex | Knex.Transaction | HeldTransaction, values: unknown[]): Promise<R[]> => {
    if (values.length !== n) throw new Error(`${name}: ${values.length} values for ${n} placeholders`);
    if (db instanceof HeldTransaction) return (await db.connection.query({ name, text, values })).rows as R[];
    const client = db.client as Pool;
    const connection = await client.acquireConnection();
    try {
      return (await connection.query({ name, text, values })).rows as R[];
    } finally {
      await client.releaseConnection(connection);
    }
  };
}

/** A transaction whose statements run on their generic plans; the setting ends with it. */
const BEGIN_GENERIC = 'begin; set local plan_cache_mode = force_generic_plan';

/**
 * A transaction of prepared statements on one pooled connection, without knex's transaction
 * object, which builds a whole knex instance each time: at 200 deliveries/s the claim round's
 * were a sixth of the worker's garbage (docs/decisions/0333-where-the-tail-goes.md). Commits when
 * `work` resolves and rolls back when it throws; a connection whose rollback fails is not reused.
 *
 * Its statements run on their generic plans, planned once per connection: left to choose,
 * PostgreSQL compares a generic plan's estimate with the first runs' plans, made on small tables,
 * and once the tables had grown it planned the claim's take anew on every call, 2 ms each
 * (docs/decisions/0341-claim-plans-generic.md). The setting is the transaction's own (`set local`),
 * sent with its `begin` in one round trip, and ends with it.
 */
export async function preparedTransaction<T>(knex: Knex, work: (trx: HeldTransaction) => Promise<T>): Promise<T> {
  const client = knex.client as Pool;
  const connection = await client.acquireConnection();
  try {
    let result: T;
    try {
      // Inside: should the setting fail after `begin`, the rollback leaves no transaction on the connection.
      await connection.query(BEGIN_GENERIC);
      result = await work(new HeldTransaction(connection));
    } catch (err) {
      await connection.query('rollback').catch((rollbackErr: unknown) => {
        connection.__knex__disposed = rollbackErr;
      });
      throw err;
    }
    await connection.query('commit');
    return result;
  } finally {
    await client.releaseConnection(connection);
  }
}
