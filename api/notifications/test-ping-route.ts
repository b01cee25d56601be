import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ApiDeps } from '../deps';
import { validate } from '../middleware/validate';
import { EVENT_SOURCES, TEST_PING, type ServiceEvent } from '../../domain/events';
import { sourceOf, type CatalogEntry } from './event-catalog';
import { newId } from '../../lib/ids';
import { conflict, notFound, validationFailed } from '../../lib/errors';
import { aimedPublisher } from '../../webhooks';
import { hopLogOf } from '../../lib/runtime/hop-log';
import { EndpointParams, TestEventBody } from './schema';
import { TestEventView } from './answer-schema';
import { ok } from '../respond';

/**
 * spec §4.3: one test.ping, to this endpoint only, through the same publish path as every event; or, named in
 * the body, a type's catalog example (docs/decisions/0397-event-catalog.md), aimed the same way. The catalog is the
 * one the API process built (api/notifications/router.ts).
 */
export function testPingRoute(
  router: Router,
  one: string,
  staff: Middleware,
  deps: ApiDeps & { catalog: readonly CatalogEntry[] },
): void {
  // Version 1's data: stored as every event is, and sent in the endpoint's pinned version like every delivery
  // (docs/decisions/0420-versioned-payloads.md), so it arrives as that version's catalog example.
  const examples = new Map(deps.catalog.map((e) => [e.event_type, e.example.data]));
  const knex = () => deps.orm.em.getConnection().getKnex();
  const publishAimed = aimedPublisher(
    knex,
    deps.config.BEHAVIOUR_SET,
    hopLogOf(deps.config.WEBHOOK_HOP_LOG_DIR, 'api'),
  );

  router.post(
    `${one}/test`,
    staff,
    validate(
      {
        params: EndpointParams,
        body: TestEventBody,
        response: TestEventView,
        status: 202,
        summary: "Send a test.ping event to the endpoint, or a type's catalog example",
      },
      async (ctx, { params, body }) => {
        const type = body.event_type ?? TEST_PING;
        const example = type === TEST_PING ? undefined : examples.get(type);
        if (type !== TEST_PING && !example)
          throw validationFailed([
            { in: 'body', path: 'event_type', message: 'Not an event type of GET /notifications/event-catalog' },
          ]);
        const event: ServiceEvent = {
          id: newId(),
          type,
          source: example ? sourceOf(type) : EVENT_SOURCES.notifications,
          orgId: ctx.state.principal.orgId,
          occurredAt: new Date().toISOString(),
          data: example ?? {
            endpoint_id: params.id,
            message: 'This is a test event sent from the webhook settings.',
          },
        };
        // Answered once the event and its delivery are committed; the dispatcher hears of it at commit.
        const outcome = await publishAimed({ event, endpointId: params.id });
        if (outcome.kind === 'endpoint_missing') throw notFound('Webhook endpoint');
        if (outcome.kind === 'endpoint_disabled')
          throw conflict('ENDPOINT_DISABLED', 'The endpoint is disabled; re-enable it with PATCH first');
        ok(ctx, { event_id: outcome.eventId, event_type: type, delivery_id: outcome.deliveryId }, 202);
      },
    ),
  );
}
