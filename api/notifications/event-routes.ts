import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ApiDeps } from '../deps';
import { validate } from '../middleware/validate';
import { supportedEventTypes } from '../../domain/events';
import { eventReads, renderEventBody } from '../../webhooks';
import { checkEventTypes } from './event-type-policy';
import { decodeSeqCursor, encodeSeqCursor } from '../cursor';
import { ListEventsQuery } from './schema';
import { EventList } from './answer-schema';
import { ok } from '../respond';

/**
 * The events API (docs/decisions/0168-events-api.md): what a webhook missed, pulled. Every deliverable event of the
 * caller's organisation, oldest first, each as the §6.3 envelope that was (or would have been)
 * delivered: the stored bytes when some endpoint got it, rendered the same way otherwise.
 */
export function eventRoutes(router: Router, staff: Middleware, deps: ApiDeps): void {
  const types = supportedEventTypes(deps.config.BEHAVIOUR_SET);
  const events = eventReads(deps.orm);
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
        // An unknown type is the same 400 as on subscription; "*" (or none) means every type.
        const wanted = query.event_type ? checkEventTypes(deps.config.BEHAVIOUR_SET, [query.event_type]) : ['*'];
        const rows = await events.page(ctx.state.principal.orgId, {
          types: wanted[0] === '*' ? types : wanted,
          afterSeq: query.after ? decodeSeqCursor(query.after) : undefined,
          limit: query.limit + 1,
        });
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
