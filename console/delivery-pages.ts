import type { Context } from 'koa';
import type { DeliveryDetail, DeliveryList, DeliveryQuery, Endpoint, EndpointList, EventTypes } from './api-types';
import { field, need, utcOf, uuid, type ConsoleCtx, type ConsoleKit, type ConsoleRouter } from './console-kit';
import { refusal } from './format';
import type { Notice } from './layout';
import { deliveryBody, explorerBody, type DeliveryFilters } from './views/deliveries-view';

const filtersOf = (ctx: Context): DeliveryFilters => ({
  endpoint_id: field(ctx.query, 'endpoint_id'),
  status: field(ctx.query, 'status'),
  event_type: field(ctx.query, 'event_type'),
  event_id: field(ctx.query, 'event_id'),
  from: field(ctx.query, 'from'),
  to: field(ctx.query, 'to'),
});

/** The filters as the JSON API's list query. */
function apiQuery(f: DeliveryFilters, cursor: string, limit: string): URLSearchParams {
  const q: Record<keyof DeliveryQuery, string | undefined> = {
    endpoint_id: f.endpoint_id || undefined,
    status: f.status || undefined,
    event_type: f.event_type || undefined,
    event_id: f.event_id || undefined,
    created_after: utcOf(f.from),
    created_before: utcOf(f.to),
    cursor: cursor || undefined,
    limit: /^\d{1,3}$/.test(limit) ? limit : '50',
  };
  return new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined));
}

const DONE: Record<string, Notice> = {
  retried: { kind: 'ok', text: 'Retry accepted: the attempt runs now.' },
};

/**
 * The delivery explorer and a delivery's page (issue 22): filters by endpoint, status, event type
 * and creation time, cursor-paged; every attempt, the signed body, the workflow; manual retry.
 */
export function deliveryPages(router: ConsoleRouter, kit: ConsoleKit): void {
  const { page, session, sameOrigin, form, api, links } = kit;

  router.get('/deliveries', session, async (ctx) => {
    const f = filtersOf(ctx);
    const query = apiQuery(f, field(ctx.query, 'cursor'), field(ctx.query, 'limit'));
    const [list, endpoints, types] = await Promise.all([
      ctx.state.api.get<DeliveryList>(`${api.deliveries}?${query}`),
      ctx.state.api.get<EndpointList>(`${api.endpoints}?limit=100`),
      ctx.state.api.get<EventTypes>('/notifications/event-types'),
    ]);
    const next = list.ok && list.data.next_cursor ? nextLink(ctx, list.data.next_cursor) : null;
    const body = explorerBody(
      f,
      list.ok ? list.data : { items: [], next_cursor: null },
      need(endpoints, 'endpoints').items,
      need(types, 'event types').eventTypes,
      { next, notice: list.ok ? null : refusal(list) },
    );
    page(ctx, list.ok ? 200 : list.status, 'Deliveries', 'deliveries', body);
  });

  router.get('/deliveries/:delivery_id', session, async (ctx) => {
    const done = field(ctx.query, 'done');
    await deliveryPage(ctx, uuid(ctx.params.delivery_id), Object.hasOwn(DONE, done) ? DONE[done]! : null, 200);
  });

  router.post('/deliveries/:delivery_id/retry', sameOrigin, session, form, async (ctx) => {
    const id = uuid(ctx.params.delivery_id);
    const answer = await ctx.state.api.post(`${api.deliveries}/${id}/retry`);
    if (!answer.ok) return deliveryPage(ctx, id, refusal(answer), answer.status);
    ctx.status = 303;
    ctx.redirect(`/console/deliveries/${id}?done=retried`);
  });

  async function deliveryPage(ctx: ConsoleCtx, id: string, notice: Notice | null, status: number) {
    const d = need(await ctx.state.api.get<DeliveryDetail>(`${api.deliveries}/${id}`), 'the delivery');
    const endpoint = await ctx.state.api.get<Endpoint>(`${api.endpoints}/${d.endpoint_id}`);
    page(ctx, status, 'Delivery', 'deliveries', deliveryBody(d, endpoint.ok ? endpoint.data : null, links, notice));
  }
}

/** This page's own address with the next cursor: the filters stay as they are. */
function nextLink(ctx: Context, cursor: string): string {
  const q = new URLSearchParams(ctx.querystring);
  q.set('cursor', cursor);
  return `/console/deliveries?${q}`;
}
