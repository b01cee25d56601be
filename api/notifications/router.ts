import Router from '@koa/router';
import type { ApiDeps } from '../deps';
import { auth } from '../middleware/auth';
import { validate } from '../middleware/validate';
import { ok } from '../respond';
import { secretBoxFrom } from '../../webhooks';
import { supportedEventTypes } from '../../domain/events';
import { NOTIFICATION_PATHS } from './paths';
import { EventCatalogView, EventTypesView } from './answer-schema';
import { eventCatalog } from './event-catalog';
import { endpointRoutes } from './endpoint-routes';
import { deliveryRoutes } from './delivery-routes';
import { eventRoutes } from './event-routes';

/**
 * spec §4.3 under /notifications. The set decides the path segments (paths.ts) and the event
 * types; staff and admins of the token's organisation manage its endpoints
 * (docs/decisions/0068-endpoint-management-roles.md).
 */
export function notificationsRouter(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/notifications' });
  const set = deps.config.BEHAVIOUR_SET;
  const paths = NOTIFICATION_PATHS[set];
  const staff = auth(deps.tokens, 'staff', 'admin');

  router.get(
    '/event-types',
    auth(deps.tokens),
    validate({ response: EventTypesView, summary: 'List the event types this deployment delivers' }, (ctx) =>
      ok(ctx, { eventTypes: supportedEventTypes(set) }),
    ),
  );
  // Built once per API process, for the catalog and the test path alike (docs/decisions/0397-event-catalog.md).
  const catalog = eventCatalog(set);
  router.get(
    '/event-catalog',
    auth(deps.tokens),
    validate(
      {
        response: EventCatalogView,
        summary:
          'The event catalog: each event type delivered here, its JSON Schema and an example per payload version, since when it exists',
      },
      (ctx) => ok(ctx, { items: catalog }),
    ),
  );
  endpointRoutes(router, paths.endpoints, staff, { ...deps, secrets: secretBoxFrom(deps.config), catalog });
  deliveryRoutes(router, paths.deliveries, staff, deps);
  eventRoutes(router, staff, deps);
  return router;
}
