import type { EndpointList, EventCatalog, TestEvent } from './api-types';
import { field, need, uuid, type ConsoleCtx, type ConsoleKit, type ConsoleRouter } from './console-kit';
import { refusal } from './format';
import type { Notice } from './layout';
import { catalogBody } from './views/catalog-view';

/**
 * The event catalog in the portal (docs/decisions/0397-event-catalog.md): read from the JSON API's catalog,
 * and "send this example" through the endpoint's test path, then shown as a test ping is.
 */
export function catalogPages(router: ConsoleRouter, kit: ConsoleKit): void {
  const { page, session, sameOrigin, form, api } = kit;

  const show = async (ctx: ConsoleCtx, status = 200, notice: Notice | null = null) => {
    const [catalog, endpoints] = await Promise.all([
      ctx.state.api.get<EventCatalog>('/notifications/event-catalog'),
      ctx.state.api.get<EndpointList>(`${api.endpoints}?limit=100`),
    ]);
    const body = catalogBody(need(catalog, 'the event catalog').items, need(endpoints, 'endpoints').items, notice);
    page(ctx, status, 'Event catalog', 'catalog', body);
  };

  router.get('/catalog', session, (ctx) => show(ctx));

  router.post('/catalog/send', sameOrigin, session, form, async (ctx) => {
    const endpointId = uuid(field(ctx.request.body, 'endpoint_id'));
    const sent = await ctx.state.api.post<TestEvent>(`${api.endpoints}/${endpointId}/test`, {
      event_type: field(ctx.request.body, 'event_type'),
    });
    if (!sent.ok) return show(ctx, sent.status, refusal(sent));
    ctx.status = 303;
    ctx.redirect(`/console/webhooks/${endpointId}/pings/${sent.data.delivery_id}`);
  });
}
