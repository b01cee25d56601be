import type { Orm } from '../db/orm';
import { appendEvents } from '../db/outbox';
import type { ServiceEvent } from '../domain/events';
import type { EventDispatcher } from './event-dispatcher';

/**
 * The publish path for events that are not part of a workflow's own projection (test.ping,
 * identity events): store in the outbox, commit, then hand to the dispatcher. Should the process
 * die between the two, the outbox relay dispatches the stored event (spec §6.1, issue 4).
 * `targets` aims an event at given endpoints only (spec §4.3: the test operation).
 */
export async function publishEvents(
  deps: { orm: Orm; dispatcher: EventDispatcher },
  events: readonly ServiceEvent[],
  targets: { eventId: string; endpointId: string }[] = [],
): Promise<string[]> {
  const knex = deps.orm.em.getConnection().getKnex();
  // Without targets the outbox insert is one statement, atomic on its own: no BEGIN/COMMIT round trips.
  const fresh = targets.length
    ? await knex.transaction(async (trx) => {
        const rows = targets.map((t) => ({ event_id: t.eventId, endpoint_id: t.endpointId }));
        await trx('webhook_event_targets').insert(rows).onConflict(['event_id', 'endpoint_id']).ignore();
        return appendEvents(trx, events);
      })
    : await appendEvents(knex, events);
  if (fresh.length) await deps.dispatcher.dispatch(fresh);
  return fresh;
}
