import type { Knex } from '@mikro-orm/postgresql';
import { preparedStatement, runPrepared, type PreparedStatement } from '../../db/prepared';

/**
 * Rows a worker takes for a call to Temporal are leased, not locked (docs/decisions/0332-leases-not-locks.md):
 * one committed statement marks them `leased_until`, the call runs with no transaction open, and a
 * second statement deletes what the call handled and frees the rest. A row lock held across the call
 * kept a transaction id open for as long as Temporal took to answer, and every reader that waits for
 * older transactions (the events list, vacuum) waited with it. A worker that dies holding a lease
 * holds it this long; then any worker takes the rows again, and every call made with them is
 * idempotent (a workflow id already started, a signal already seen).
 */
export const LEASE_MS = 60_000;

/** SQL: the row aliased `alias` is held by no call (never leased, or its lease ran out). */
export const unleased = (alias: string) => `(${alias}.leased_until is null or ${alias}.leased_until < now())`;

/** The tables whose rows are leased, each by its key. */
const KEYS = {
  webhook_queue: 'delivery_id',
  webhook_schedule_handovers: 'delivery_id',
  webhook_endpoint_cleanups: 'endpoint_id',
} as const;

/** Ends a call's leases in one statement: `done` rows are deleted, `undone` ones free for the next call. */
export async function endLeases(
  knex: Knex,
  table: keyof typeof KEYS,
  done: readonly string[],
  undone: readonly string[] = [],
): Promise<void> {
  if (done.length === 0 && undone.length === 0) return;
  await runPrepared(knex, END_LEASES[table], [[...done], [...undone]]);
}

/** Each table's statement, prepared and planned once per connection (docs/decisions/0353-workflow-shape-statements-planned-once.md). */
const END_LEASES = Object.fromEntries(
  Object.entries(KEYS).map(([table, key]) => [
    table,
    preparedStatement(
      `end-leases-${table}`,
      `with done as (delete from ${table} where ${key} = any(?::uuid[]))
       update ${table} set leased_until = null where ${key} = any(?::uuid[])`,
    ),
  ]),
) as Record<keyof typeof KEYS, PreparedStatement<unknown>>;
