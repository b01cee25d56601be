import type { EventList, EventTypes } from './api-types';
import { field, need, type ConsoleKit, type ConsoleRouter } from './console-kit';
import { refusal } from './format';
import { eventsBody } from './views/events-view';

/** The events view (issue 22): the events API, filtered by type, paged forward with its `after` cursor. */
export function eventPages(router: ConsoleRouter, kit: ConsoleKit): void {
  const { page, session } = kit;

  router.get('/events', session, async (ctx) => {
    const eventType = field(ctx.query, 'event_type');
    const after = field(ctx.query, 'after');
    const query = new URLSearchParams({ limit: '50' });
    if (eventType) query.set('event_type', eventType);
    if (after) query.set('after', after);
    const [list, types] = await Promise.all([
      ctx.state.api.get<EventList>(`/notifications/events?${query}`),
      ctx.state.api.get<EventTypes>('/notifications/event-types'),
    ]);
    const next =
      list.ok && list.data.has_more && list.data.next_cursor
        ? `/console/events?${new URLSearchParams({ ...(eventType && { event_type: eventType }), after: list.data.next_cursor })}`
        : null;
    const body = eventsBody(
      list.ok ? list.data : { items: [], next_cursor: null, has_more: false },
      need(types, 'event types').eventTypes,
      {
        eventType,
        next,
        notice: list.ok ? null : refusal(list),
      },
    );
    page(ctx, list.ok ? 200 : list.status, 'Events', 'events', body);
  });
}
