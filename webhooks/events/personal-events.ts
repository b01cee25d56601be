import type { Knex } from '@mikro-orm/postgresql';
import { keepClearInEvent } from '../../domain/personal-fields';

/** Which events: one investor's of one organisation, or every one (the reseal of a whole install). */
export interface EventScope {
  orgId?: string;
  investorId?: string;
}

/** What keeps an investor's clear value: seals it under their key, or the erased marker once they were erased. */
export type KeeperOf = (orgId: string, investorId: string) => Promise<(clear: string) => string>;

interface EventRow {
  seq: string;
  id: string;
  org_id: string;
  type: string;
  data: Record<string, unknown>;
  body: string | null;
}

/**
 * Subscription events (and the bodies their deliveries send) that hold an investor's words in clear,
 * written before personal fields were sealed (docs/decisions/0384-resealing-fields-written-in-clear.md):
 * with `keeperOf`, each such value is replaced by what it gives (an event and its body in one
 * transaction, each only if unchanged since read); without, they are only counted. `batch` events a
 * statement, in publication order. Answers how many events and bodies held (and, with `keeperOf`, no
 * longer hold) a value in clear.
 */
export async function keepClearInEvents(
  knex: Knex,
  scope: EventScope,
  keeperOf: KeeperOf | null,
  batch = 500,
): Promise<{ events: number; webhook_event_bodies: number }> {
  const found = { events: 0, webhook_event_bodies: 0 };
  let after = '0';
  for (;;) {
    const q = knex('events as e')
      .leftJoin('webhook_event_bodies as b', 'b.event_id', 'e.id')
      .where('e.seq', '>', after)
      .where('e.type', 'like', 'subscription.%')
      // Only events whose data can hold an answer: the view's requests, or the answer's own event.
      .whereRaw(`(e.data->'info_requests' is not null or e.data->'document_references' is not null)`)
      .orderBy('e.seq')
      .limit(batch)
      .select('e.seq', 'e.id', 'e.org_id', 'e.type', 'e.data', 'b.body');
    if (scope.orgId) q.where('e.org_id', scope.orgId);
    if (scope.investorId) q.whereRaw(`e.data->>'investor_id' = ?`, [scope.investorId]);
    const rows: EventRow[] = await q;
    for (const row of rows) await keepOne(knex, row, keeperOf, found);
    if (rows.length < batch) return found;
    after = rows[rows.length - 1]!.seq;
  }
}

async function keepOne(
  knex: Knex,
  row: EventRow,
  keeperOf: KeeperOf | null,
  found: { events: number; webhook_event_bodies: number },
): Promise<void> {
  const investorId = typeof row.data.investor_id === 'string' ? row.data.investor_id : null;
  const envelope = row.body === null ? null : (JSON.parse(row.body) as { data?: Record<string, unknown> });
  const count = (clear: string) => clear;
  const inData = keepClearInEvent(row.type, row.data, count).kept > 0;
  const inBody = envelope?.data ? keepClearInEvent(row.type, envelope.data, count).kept > 0 : false;
  if (!inData && !inBody) return;
  if (!keeperOf || !investorId) {
    found.events += inData ? 1 : 0;
    found.webhook_event_bodies += inBody ? 1 : 0;
    return;
  }
  const keep = await keeperOf(row.org_id, investorId);
  await knex.transaction(async (trx) => {
    if (inData) {
      const data = keepClearInEvent(row.type, row.data, keep).data;
      const n = await trx('events')
        .where({ id: row.id })
        .whereRaw('data = ?::jsonb', [JSON.stringify(row.data)])
        .update({ data: JSON.stringify(data) });
      found.events += n;
    }
    if (inBody && envelope?.data) {
      // The body keeps its bytes but for the values replaced: every attempt opens them as it goes out.
      const body = JSON.stringify({ ...envelope, data: keepClearInEvent(row.type, envelope.data, keep).data });
      const n = await trx('webhook_event_bodies').where({ event_id: row.id, body: row.body }).update({ body });
      found.webhook_event_bodies += n;
    }
  });
}
