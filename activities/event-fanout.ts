import type { Knex } from '@mikro-orm/postgresql';
import type { Orm } from '../db/orm';
import { supportedEventTypes } from '../domain/events';
import type { BehaviourSet } from '../domain/behaviour-set';
import { uuidFromName } from '../lib/ids';
import { renderEventBody, type EnvelopeSource } from './webhook-signing';

/**
 * The fan-out's one database step, in one transaction: store the §6.3 body once, record a
 * delivery per matching endpoint (idempotent: the delivery id is derived from event and
 * endpoint), and mark the event dispatched. From here on Temporal owns the event.
 */
export function createFanoutActivities(deps: { orm: Orm; config: () => { BEHAVIOUR_SET: BehaviourSet; WEBHOOK_FIRST_ATTEMPT_IN_FANOUT?: boolean } }) {
  let supportedTypes: Set<string> | undefined;
  const supported = () => (supportedTypes ??= new Set(supportedEventTypes(deps.config().BEHAVIOUR_SET)));
  return {
    async planFanout(eventId: string): Promise<FanoutPlan> {
      const knex = deps.orm.em.getConnection().getKnex();
      const firstAttemptInFanout = deps.config().WEBHOOK_FIRST_ATTEMPT_IN_FANOUT ?? false;
      return knex.transaction(async (trx) => {
        const event: (EnvelopeSource & { dispatched_at: Date | null }) | undefined = await trx('events')
          .where({ id: eventId })
          .forUpdate()
          .first('id', 'type', 'source', 'org_id', 'occurred_at', 'data', 'dispatched_at');
        if (!event) return { deliveryIds: [], firstAttemptInFanout };
        // spec §6.1: internal-only and other-set types are dropped silently.
        const endpointIds = supported().has(event.type) ? await matchingEndpoints(trx, event) : [];
        if (endpointIds.length) {
          await trx('webhook_event_bodies').insert({ event_id: event.id, body: renderEventBody(event) }).onConflict('event_id').ignore();
          const rows = endpointIds.map((endpointId) => ({
            id: uuidFromName(event.id, endpointId),
            event_id: event.id,
            endpoint_id: endpointId,
            org_id: event.org_id,
            event_type: event.type,
          }));
          await trx('webhook_deliveries').insert(rows).onConflict('id').ignore();
        }
        if (!event.dispatched_at) await trx('events').where({ id: eventId }).update({ dispatched_at: trx.fn.now() });
        return { deliveryIds: endpointIds.map((endpointId) => uuidFromName(event.id, endpointId)), firstAttemptInFanout };
      });
    },
  };
}

/**
 * The dispatcher's shortcut: an event no endpoint wants is marked dispatched here, in one locked
 * step, and no fan-out workflow runs for it (most events, in most organisations). Answers false,
 * touching nothing, when there is someone to deliver to: the fan-out workflow owns those.
 */
export function untargetedEvents(orm: Orm, set: BehaviourSet) {
  const supported = new Set(supportedEventTypes(set));
  return async (eventId: string): Promise<boolean> => {
    const knex = orm.em.getConnection().getKnex();
    return knex.transaction(async (trx) => {
      const event: (EnvelopeSource & { dispatched_at: Date | null }) | undefined = await trx('events')
        .where({ id: eventId })
        .forUpdate()
        .first('id', 'type', 'source', 'org_id', 'occurred_at', 'data', 'dispatched_at');
      if (!event) return false;
      if (event.dispatched_at) return true;
      if (supported.has(event.type) && (await matchingEndpoints(trx, event)).length) return false;
      await trx('events').where({ id: eventId }).update({ dispatched_at: trx.fn.now() });
      return true;
    });
  };
}

export interface FanoutPlan {
  deliveryIds: string[];
  /** Read here, so the workflow sees the setting through its history (deterministic on replay). */
  firstAttemptInFanout: boolean;
}

/** The event's explicit target (test.ping), else every live endpoint of the org subscribed to its type. */
async function matchingEndpoints(trx: Knex.Transaction, event: EnvelopeSource): Promise<string[]> {
  const targets = await trx('webhook_event_targets').where({ event_id: event.id }).pluck('endpoint_id');
  const query = trx('webhook_endpoints').where({ org_id: event.org_id, status: 'enabled' }).whereNull('deleted_at').orderBy('id');
  if (targets.length) query.whereIn('id', targets);
  else query.whereRaw(`(event_types @> array[?]::text[] or '*' = any(event_types))`, [event.type]);
  return query.pluck('id');
}
