import { badRequest } from '../lib/errors';

/**
 * Keyset cursors for every list: opaque to callers, stable while rows are added, and refused with
 * 400 INVALID_CURSOR when they are not one a list handed out (never read as "start over").
 */
export interface Position {
  /** The row's sort timestamp, ISO 8601 in UTC, to the microsecond. */
  at: string;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const invalid = () => badRequest('INVALID_CURSOR', 'The cursor is not one this list returned');

const encodeCursor = (at: Date | string, id: string) =>
  Buffer.from(JSON.stringify([typeof at === 'string' ? at : at.toISOString(), id])).toString('base64url');

export function decodeCursor(cursor: string): Position {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [unknown, unknown];
    if (
      typeof at !== 'string' ||
      !ISO_UTC.test(at) ||
      Number.isNaN(new Date(at).getTime()) ||
      typeof id !== 'string' ||
      !UUID.test(id)
    )
      throw new Error();
    return { at, id };
  } catch {
    throw invalid();
  }
}

/** Where a list newest first continues (db/keyset.ts): after the cursor's row, or from the start without one. */
export const positionAfter = (cursor: string | undefined): Position | undefined =>
  cursor ? decodeCursor(cursor) : undefined;

/** The MikroORM filter for the rows after `cursor` in a list newest first by (createdAt, id). */
export function olderThan(cursor: string) {
  const { at, id } = decodeCursor(cursor);
  const createdAt = new Date(at);
  return { $or: [{ createdAt: { $lt: createdAt } }, { createdAt, id: { $lt: id } }] };
}

/** Where a row read newest first (db/keyset.ts) sits in its list. */
export const byCreation = (r: { cursor_at: string; id: string }) => ({ at: r.cursor_at, id: r.id });

/** The first `limit` of `limit + 1` rows, and the cursor after them when there were more. */
export function page<T>(rows: T[], limit: number, position: (row: T) => { at: Date | string; id: string }) {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items,
    next_cursor: rows.length > limit && last ? encodeCursor(position(last).at, position(last).id) : null,
  };
}

/** Keyset paging forward by the outbox's publication order (events API, oldest first). */
export const encodeSeqCursor = (seq: string | number) =>
  Buffer.from(JSON.stringify(['seq', String(seq)])).toString('base64url');

export function decodeSeqCursor(cursor: string): string {
  try {
    const [kind, seq] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [string, string];
    if (kind !== 'seq' || !/^\d{1,18}$/.test(seq)) throw new Error();
    return seq;
  } catch {
    throw invalid();
  }
}
