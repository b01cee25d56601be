import type { Knex } from '@mikro-orm/postgresql';

/**
 * A timestamp column as PostgreSQL holds it, to the microsecond, in ISO 8601 UTC: what a cursor
 * carries. A JavaScript Date keeps milliseconds, and rows written in one statement share one
 * microsecond timestamp, so a cursor cut to milliseconds skipped the rest of them. The engine's lists
 * (newestFirst) and the API's own (api/cursor.ts) both use it.
 */
export const exactTime = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * Newest first by (created_at, id), continuing after `after` (a position the API decoded from its
 * cursor, api/cursor.ts); each row gains its `cursor_at`, the position the next page starts after.
 */
export function newestFirst(query: Knex.QueryBuilder, table: string, after?: { at: string; id: string }): void {
  query.select(query.client.raw(`${exactTime(`${table}.created_at`)} as cursor_at`));
  if (after) query.whereRaw(`(${table}.created_at, ${table}.id) < (?::timestamptz, ?::uuid)`, [after.at, after.id]);
  query.orderBy([
    { column: `${table}.created_at`, order: 'desc' },
    { column: `${table}.id`, order: 'desc' },
  ]);
}
