import type { Knex } from '@mikro-orm/postgresql';

type PgResult = { rows: unknown[] };

interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] } | string): Promise<PgResult | PgResult[]>;
  /** knex's pool drops a connection that carries this when it is next acquired. */
  __knex__disposed?: unknown;
}

interface Pool {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(c: PgConnection): Promise<void>;
}

/**
 * A statement PostgreSQL prepares once per connection and then only executes: for the delivery
 * engine's hot statements, whose planning cost as much as running them (pg_stat_statements: the
 * publish statement 0.5 ms to plan, 0.5 ms to run; a claim 1.7 ms to plan). Written with `?`
 * placeholders like the rest of the code. Called, it runs on its own; a `preparedTransaction` runs
 * it by its SQL name.
 */
export interface PreparedStatement<R> {
  (db: Knex | Knex.Transaction, values: unknown[]): Promise<R[]>;
  /** Its name for SQL's `prepare` and `execute` inside a transaction. */
  readonly sqlName: string;
  /** Its text with `$n` placeholders. */
  readonly text: string;
  readonly placeholders: number;
}

export function preparedStatement<R>(name: string, sql: string): PreparedStatement<R> {
  let n = 0;
  const text = sql.replace(/\?/g, () => `$${++n}`);
  const run = async (db: Knex | Knex.Transaction, values: unknown[]): Promise<R[]> => {
    counted(name, n, values);
    const client = db.client as Pool;
    const connection = await client.acquireConnection();
    try {
      return rowsOf(await connection.query({ name, text, values }), 0) as R[];
    } finally {
      await client.releaseConnection(connection);
    }
  };
  return Object.assign(run, { sqlName: name.replace(/-/g, '_'), text, placeholders: n });
}

/** The statements of a `preparedTransaction`, one at a time, each sent in one round trip with what goes around it. */
export interface PreparedTransaction {
  /** Runs a statement; the transaction's first carries its `begin` with it. */
  run<R>(statement: PreparedStatement<R>, values: unknown[]): Promise<R[]>;
  /** Runs a statement and commits with it: the transaction's last. */
  runAndCommit<R>(statement: PreparedStatement<R>, values: unknown[]): Promise<R[]>;
}

/** A transaction whose statements run on their generic plans; the setting ends with it. */
const BEGIN_GENERIC = ['begin', 'set local plan_cache_mode = force_generic_plan'];

/** The SQL-level prepared statements each pooled connection holds already. */
const preparedOn = new WeakMap<PgConnection, Set<string>>();

/**
 * A transaction of prepared statements on one pooled connection, in as few round trips as it has
 * statements: the first carries the `begin`, the last (`runAndCommit`) the `commit`, each in one
 * simple query with SQL's `execute` (and, the first time on that connection, its `prepare`). The
 * claim round is two round trips rather than four, and a statement that commits on its own one
 * rather than three (docs/decisions/0342-one-round-trip-per-statement.md). Without knex's
 * transaction object, which builds a whole knex instance each time: at 200 deliveries/s the claim
 * round's were a sixth of the worker's garbage (docs/decisions/0333-where-the-tail-goes.md).
 *
 * Commits when `work` resolves (with one more round trip if it did not commit itself) and rolls
 * back when it throws. A connection whose rollback fails, or whose failed statement was being
 * prepared (a `prepare` outlives the rollback, and whether it ran is not known), is not reused.
 *
 * Its statements run on their generic plans, planned once per connection: left to choose,
 * PostgreSQL compares a generic plan's estimate with the first runs' plans, made on small tables,
 * and once the tables had grown it planned the claim's take anew on every call, 2 ms each
 * (docs/decisions/0341-claim-plans-generic.md). The setting is the transaction's own (`set local`)
 * and ends with it, so the ORM's statements on the same connection are planned as before.
 */
export async function preparedTransaction<T>(knex: Knex, work: (trx: PreparedTransaction) => Promise<T>): Promise<T> {
  const client = knex.client as Pool;
  const connection = await client.acquireConnection();
  const known = preparedOn.get(connection) ?? new Set<string>();
  preparedOn.set(connection, known);
  // Changed by `send`, so read afresh after each await.
  let state = 'none' as 'none' | 'open' | 'committed';
  let unsure = false;
  let sending = false;

  async function send<R>(statement: PreparedStatement<R>, values: unknown[], commit: boolean): Promise<R[]> {
    if (state === 'committed') throw new Error(`${statement.sqlName}: the transaction has committed`);
    if (sending) throw new Error(`${statement.sqlName}: a statement of this transaction is still running`);
    counted(statement.sqlName, statement.placeholders, values);
    const parts = state === 'none' ? [...BEGIN_GENERIC] : [];
    const preparing = !known.has(statement.sqlName);
    if (preparing) parts.push(`prepare ${statement.sqlName} as ${statement.text}`);
    const at = parts.length;
    parts.push(
      values.length
        ? `execute ${statement.sqlName}(${values.map(literal).join(', ')})`
        : `execute ${statement.sqlName}`,
    );
    if (commit) parts.push('commit');
    // From here a failure rolls back, whatever part of the script ran.
    state = 'open';
    sending = true;
    let results: PgResult | PgResult[];
    try {
      results = await connection.query(parts.join(';\n'));
    } catch (err) {
      unsure ||= preparing;
      throw err;
    } finally {
      sending = false;
    }
    if (preparing) known.add(statement.sqlName);
    if (commit) state = 'committed';
    return rowsOf(results, at) as R[];
  }

  try {
    let result: T;
    try {
      result = await work({
        run: (statement, values) => send(statement, values, false),
        runAndCommit: (statement, values) => send(statement, values, true),
      });
    } catch (err) {
      if (state === 'open')
        await connection.query('rollback').catch((rollbackErr: unknown) => {
          connection.__knex__disposed = rollbackErr;
        });
      if (unsure) connection.__knex__disposed ??= err;
      throw err;
    }
    if (state === 'open') await connection.query('commit');
    return result;
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * One prepared statement on its generic plan, planned once per connection. On its own it is a
 * `preparedTransaction` of one statement, one round trip with its `begin` and `commit`; inside the
 * caller's transaction the driver prepares it there. The `workflow` shape's statements for each
 * delivery went through knex unprepared, or prepared and still planned for their values on every
 * call, and their planning was 40% of PostgreSQL's CPU at 50 deliveries/s
 * (docs/decisions/0353-workflow-shape-statements-planned-once.md).
 */
export function runPrepared<R>(
  db: Knex | Knex.Transaction,
  statement: PreparedStatement<R>,
  values: unknown[],
): Promise<R[]> {
  return db.isTransaction
    ? statement(db, values)
    : preparedTransaction(db, (trx) => trx.runAndCommit(statement, values));
}

function counted(name: string, placeholders: number, values: readonly unknown[]): void {
  if (values.length !== placeholders)
    throw new Error(`${name}: ${values.length} values for ${placeholders} placeholders`);
}

/** The rows of the `at`-th statement of what one query sent. */
const rowsOf = (results: PgResult | PgResult[], at: number) => (Array.isArray(results) ? results : [results])[at]!.rows;

/**
 * A value as an SQL literal for `execute`, quoted, so the statement's own placeholder types it as
 * it would a bound value: strings (JSON passed as its text), numbers, booleans, dates, null, and arrays of
 * strings (ids).
 */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return quoted(value);
  if (typeof value === 'boolean') return `'${value}'`;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
    return `'${value}'`;
  }
  if (value instanceof Date) return quoted(value.toISOString());
  if (Array.isArray(value)) return quoted(`{${value.map(arrayElement).join(',')}}`);
  throw new TypeError(`no SQL literal for a ${typeof value}`);
}

function arrayElement(element: unknown): string {
  if (typeof element !== 'string') throw new TypeError(`an array's elements must be strings, not ${typeof element}`);
  return `"${sendable(element).replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * A string literal whatever the string holds: quotes doubled, and, when it holds a backslash, an
 * escape string with backslashes doubled, so `standard_conforming_strings` does not matter (as
 * libpq's PQescapeLiteral and pg's escapeLiteral do). Two whole-string replaces: pg's escapeLiteral
 * builds its answer a character at a time, which made it the worker's largest allocation at
 * 200 deliveries/s (docs/decisions/0343-less-garbage-per-delivery.md).
 */
function quoted(text: string): string {
  const doubled = sendable(text).replaceAll("'", "''");
  return text.includes('\\') ? ` E'${doubled.replaceAll('\\', '\\\\')}'` : `'${doubled}'`;
}

/** A NUL ends the query's text where it stands: PostgreSQL's text holds none, as a bound value would be refused too. */
function sendable(text: string): string {
  if (text.includes('\u0000')) throw new TypeError('a NUL character cannot be sent in a statement');
  return text;
}
