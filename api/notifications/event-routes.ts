import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ApiDeps } from '../deps';
import { validate } from '../middleware/validate';
import { supportedEventTypes } from '../../domain/events';
import { renderEventBody, type EnvelopeSource } from '../../webhooks';
import { checkEventTypes } from './event-type-policy';
import { decodeSeqCursor, encodeSeqCursor } from '../cursor';
import { EventList, ListEventsQuery } from './schema';
import { ok } from '../respond';

type EventRow = EnvelopeSource & { seq: string; body: string | null };

/**
 * The events API (docs/decisions/0168-events-api.md): what a webhook missed, pulled. Every deliverable event of the
 * caller's organisation, oldest first, each as the §6.3 envelope that was (or would have been)
 * delivered: the stored bytes when some endpoint got it, rendered the same way otherwise.
 */
export function eventRoutes(router: Router, staff: Middleware, deps: ApiDeps): void {
  const types = supportedEventTypes(deps.config.BEHAVIOUR_SET);
  router.get(
    '/events',
    staff,
    validate(
      {
        query: ListEventsQuery,
        response: EventList,
        summary: "The organisation's events, oldest first, as delivered envelopes (pull what a webhook missed)",
      },
      async (ctx, { query }) => {
        const knex = deps.orm.em.getConnection().getKnex();
        // An unknown type is the same 400 as on subscription; "*" (or none) means every type.
        const wanted = query.event_type ? checkEventTypes(deps.config.BEHAVIOUR_SET, [query.event_type]) : ['*'];
        const q = knex('events as e')
          .leftJoin('webhook_event_bodies as b', 'b.event_id', 'e.id')
          .where('e.org_id', ctx.state.principal.orgId)
          .whereIn('e.type', wanted[0] === '*' ? types : wanted)
          // An event of a transaction still open (a lower seq that commits later) must not be paged
          // past: only events older than every running transaction are listed.
          .whereRaw('(e.txid is null or e.txid < pg_snapshot_xmin(pg_current_snapshot()))')
          .orderBy('e.seq')
          .limit(query.limit + 1)
          .select('e.seq', 'e.id', 'e.type', 'e.source', 'e.org_id', 'e.occurred_at', 'e.data', 'b.body');
        if (query.after) q.where('e.seq', '>', decodeSeqCursor(query.after));
        const rows = (await q) as EventRow[];
        const items = rows.slice(0, query.limit);
        const last = items[items.length - 1];
        ok(ctx, {
          items: items.map((r) => JSON.parse(r.body ?? renderEventBody(r)) as unknown),
          // Where to continue from, also when nothing new arrived yet: a puller keeps the last one it got.
          next_cursor: last ? encodeSeqCursor(last.seq) : (query.after ?? null),
          has_more: rows.length > query.limit,
        });
      },
    ),
  );
}
