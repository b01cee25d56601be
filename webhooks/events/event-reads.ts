import type { Orm } from '../../db/orm';
import type { EnvelopeSource } from '../secrets/signing';
import { TEST_PING } from '../../domain/events';

/**
 * The transaction ID below which every event is settled: an event of a transaction still open (a
 * lower seq that commits later) must not be paged past, so events are listed only below the oldest
 * transaction still running, but a transaction another database's session is running (xids are
 * server-wide) can write no event here and does not hold the list back. A transaction that ended
 * between the snapshot and the read of pg_stat_activity, or whose database is not shown, still
 * counts: it only delays (docs/decisions/0346).
 */
const SETTLED_BELOW = `coalesce(
  (select min(x) from pg_snapshot_xip(pg_current_snapshot()) x
    where x::xid not in (select backend_xid from pg_stat_activity
      where datname <> current_database() and backend_xid is not null)),
  pg_snapshot_xmax(pg_current_snapshot()))`;

/** An event of the outbox as the events API reads it: its envelope's source, its order, its stored §6.3 body if sent. */
type EventRow = EnvelopeSource & { seq: string; body: string | null };

/**
 * Reads of the outbox (`events`, written by publish.ts) beside the engine's own: what a webhook
 * missed, pulled, and what happened to one subscription.
 */
export function eventReads(orm: Orm) {
  const knex = () => orm.em.getConnection().getKnex();
  return {
    /**
     * The organisation's events of these types after `afterSeq`, oldest first, `limit` at most, each
     * with the body stored when some endpoint got it; test pings, but no catalog example
     * (docs/decisions/0397-event-catalog.md).
     */
    async page(orgId: string, q: { types: readonly string[]; afterSeq?: string | undefined; limit: number }) {
      const query = knex()('events as e')
        .leftJoin('webhook_event_bodies as b', 'b.event_id', 'e.id')
        .where('e.org_id', orgId)
        .whereIn('e.type', q.types)
        .whereRaw(`(e.txid is null or e.txid < ${SETTLED_BELOW})`)
        // A catalog example sent by the test path is its endpoint's, not a fact of the organisation (0397).
        .whereRaw(`(e.type = ? or not exists (select 1 from webhook_event_targets t where t.event_id = e.id))`, [
          TEST_PING,
        ])
        .orderBy('e.seq')
        .limit(q.limit)
        .select('e.seq', 'e.id', 'e.type', 'e.source', 'e.org_id', 'e.occurred_at', 'e.data', 'b.body');
      if (q.afterSeq) query.where('e.seq', '>', q.afterSeq);
      return (await query) as EventRow[];
    },

    /** One subscription's lifecycle events (subscription.* and shares.issued), in publication order. */
    ofSubscription(orgId: string, subscriptionId: string) {
      return orm.em
        .getConnection()
        .execute<{ id: string; type: string; occurred_at: Date; data: Record<string, unknown> }[]>(
          `select id, type, occurred_at, data from events
        where org_id = ? and coalesce(data->>'subscription_id', data->>'id') = ?
          and (type like 'subscription.%' or type = 'shares.issued')
        order by seq`,
          [orgId, subscriptionId],
        );
    },
  };
}
