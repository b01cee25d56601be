import type { Knex } from '@mikro-orm/postgresql';
import type { ServiceEvent } from '../domain/events';

/**
 * Stores events in the outbox inside the caller's transaction, so an event exists exactly when
 * the change that caused it does. Idempotent by event id: a retried write stores nothing twice.
 * Returns the ids that were new.
 */
export async function appendEvents(trx: Knex.Transaction | Knex, events: readonly ServiceEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((e) => ({
    id: e.id,
    org_id: e.orgId,
    type: e.type,
    source: e.source,
    data: JSON.stringify(e.data),
    occurred_at: e.occurredAt,
  }));
  const inserted: { id: string }[] = await trx('events').insert(rows).onConflict('id').ignore().returning('id');
  return inserted.map((r) => r.id);
}
