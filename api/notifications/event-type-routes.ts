import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ApiDeps } from '../deps';
import { validate } from '../middleware/validate';
import type { EndpointStore, SecretBox } from '../../webhooks';
import { auditedEndpointChange } from './endpoint-audit';
import { checkEventTypes } from './event-type-policy';
import { EndpointParams, SetEventTypesBody } from './schema';
import { EventTypesView } from './answer-schema';
import { ok } from '../respond';

/** spec §4.3: the event types an endpoint subscribes to, read and set (a change is audited). */
export function eventTypeRoutes(
  router: Router,
  one: string,
  staff: Middleware,
  deps: ApiDeps & { secrets: SecretBox; store: EndpointStore },
): void {
  const { store } = deps;
  const set = deps.config.BEHAVIOUR_SET;

  router.get(
    `${one}/subscriptions`,
    staff,
    validate(
      { params: EndpointParams, response: EventTypesView, summary: 'Get the event types the endpoint subscribes to' },
      async (ctx, { params }) => {
        ok(ctx, { eventTypes: (await store.get(ctx.state.principal.orgId, params.id)).event_types });
      },
    ),
  );

  router.put(
    `${one}/subscriptions`,
    staff,
    validate(
      {
        params: EndpointParams,
        body: SetEventTypesBody,
        response: EventTypesView,
        summary: 'Set the event types the endpoint subscribes to',
      },
      async (ctx, { params, body }) => {
        const orgId = ctx.state.principal.orgId;
        const spec = {
          action: 'webhook_endpoint.set_event_types',
          subject: { type: 'webhook_endpoint', id: params.id },
        };
        const row = await auditedEndpointChange(deps, ctx, spec, async (tx, _trx, seen) => {
          seen.before = { event_types: (await tx.get(orgId, params.id)).event_types };
          const changed = await tx.setEventTypes(orgId, params.id, checkEventTypes(set, body.eventTypes));
          seen.after = { event_types: changed.event_types };
          return changed;
        });
        ok(ctx, { eventTypes: row.event_types });
      },
    ),
  );
}
