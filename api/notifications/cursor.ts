import type { Knex } from '@mikro-orm/postgresql';
import { badRequest } from '../../lib/errors';

/** Keyset paging, newest first, by (created_at, id): stable while rows are added. */
export const encodeCursor = (r: { created_at: Date; id: string }) =>
  Buffer.from(JSON.stringify([new Date(r.created_at).toISOString(), r.id])).toString('base64url');

export function applyCursor(query: Knex.QueryBuilder, table: string, cursor: string | undefined): void {
  if (cursor) {
    const [createdAt, id] = decode(cursor);
    query.whereRaw(`(${table}.created_at, ${table}.id) < (?::timestamptz, ?::uuid)`, [createdAt, id]);
  }
  query.orderBy([{ column: `${table}.created_at`, order: 'desc' }, { column: `${table}.id`, order: 'desc' }]);
}

export function page<T extends { created_at: Date; id: string }>(rows: T[], limit: number) {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > limit && last ? encodeCursor(last) : null };
}

function decode(cursor: string): [string, string] {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [string, string];
    if (Number.isNaN(new Date(createdAt).getTime()) || !/^[0-9a-f-]{36}$/.test(id)) throw new Error();
    return [createdAt, id];
  } catch {
    throw badRequest('INVALID_CURSOR', 'The cursor is not one this list returned');
  }
}

/** Keyset paging forward by the outbox's publication order (events API, oldest first). */
export const encodeSeqCursor = (seq: string | number) => Buffer.from(JSON.stringify(['seq', String(seq)])).toString('base64url');

export function decodeSeqCursor(cursor: string): string {
  try {
    const [kind, seq] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [string, string];
    if (kind !== 'seq' || !/^\d{1,18}$/.test(seq)) throw new Error();
    return seq;
  } catch {
    throw badRequest('INVALID_CURSOR', 'The cursor is not one this list returned');
  }
}
