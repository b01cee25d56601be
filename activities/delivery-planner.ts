import type { Knex } from '@mikro-orm/postgresql';
import type { Orm } from '../db/orm';
import { supportedEventTypes } from '../domain/events';
import type { BehaviourSet } from '../domain/behaviour-set';
import { uuidFromName } from '../lib/ids';
import { renderEventBody, type EnvelopeSource } from './webhook-signing';

export interface PlannedEvent {
  eventId: string;
  deliveryIds: string[];
  /** Those of its deliveries that go through an ordered workflow, when the planner knows (the relay's re-sends do not). */
  ordered?: OrderedDelivery[];
}

export interface OrderedDelivery {
  deliveryId: string;
  endpointId: string;
  subscriptionId: string;
  seq: number;
}

type EventRow = EnvelopeSource & { dispatched_at: Date | null; seq: string };
interface EndpointRow {
  id: string;
  org_id: string;
  event_types: string[];
  ordering: string;
}

/**
 * The publish path's database step for a batch of stored events, in one transaction: store each
 * §6.3 body once, record a delivery per matching endpoint (idempotent: the delivery id is derived
 * from event and endpoint) and answer which deliveries to hand to the batchers. An event nobody
 * wants (most, in most organisations) is marked dispatched here and costs Temporal nothing; the
 * others are marked once handed over (markDispatched), so the outbox relay re-sends any that are not.
 */
export function deliveryPlanner(orm: Orm, set: BehaviourSet) {
  const supported = new Set(supportedEventTypes(set));
  const knex = () => orm.em.getConnection().getKnex();
  return {
    async plan(eventIds: readonly string[]): Promise<PlannedEvent[]> {
      if (eventIds.length === 0) return [];
      return knex().transaction(async (trx) => {
        const events: EventRow[] = await trx('events')
          .whereIn('id', eventIds)
          .whereNull('dispatched_at')
          .orderBy('id') // one lock order for every planner, so two never deadlock
          .forUpdate()
          .select('id', 'type', 'source', 'org_id', 'occurred_at', 'data', 'dispatched_at', 'seq');
        // spec §6.1: internal-only and other-set types are dropped silently.
        const wanted = events.filter((e) => supported.has(e.type));
        const endpoints = await matchingEndpoints(trx, wanted);
        const planned: PlannedEvent[] = [];
        const bodies: { event_id: string; body: string }[] = [];
        const deliveries: Record<string, string>[] = [];
        for (const e of wanted) {
          const targets = endpoints.get(e.id) ?? [];
          if (targets.length === 0) continue;
          bodies.push({ event_id: e.id, body: renderEventBody(e) });
          const ids = targets.map((t) => uuidFromName(e.id, t.id));
          targets.forEach((t, i) =>
            deliveries.push({ id: ids[i]!, event_id: e.id, endpoint_id: t.id, org_id: e.org_id, event_type: e.type }),
          );
          const subscriptionId = subscriptionOf(e);
          const ordered =
            subscriptionId === null
              ? []
              : targets.flatMap((t, i) =>
                  t.ordering === 'per_subscription'
                    ? [{ deliveryId: ids[i]!, endpointId: t.id, subscriptionId, seq: Number(e.seq) }]
                    : [],
                );
          planned.push({ eventId: e.id, deliveryIds: ids, ordered });
        }
        // One JSON parameter per table rather than a bind per value: cheaper to build and to parse.
        if (bodies.length) {
          await trx.raw(
            `insert into webhook_event_bodies (event_id, body) select v.event_id, v.body from jsonb_to_recordset(?::jsonb) as v(event_id uuid, body text) on conflict (event_id) do nothing`,
            [JSON.stringify(bodies)],
          );
        }
        for (let i = 0; i < deliveries.length; i += 5000) {
          await trx.raw(
            `insert into webhook_deliveries (id, event_id, endpoint_id, org_id, event_type)
             select v.id, v.event_id, v.endpoint_id, v.org_id, v.event_type from jsonb_to_recordset(?::jsonb) as v(id uuid, event_id uuid, endpoint_id uuid, org_id uuid, event_type text)
             on conflict (id) do nothing`,
            [JSON.stringify(deliveries.slice(i, i + 5000))],
          );
        }
        const plannedIds = new Set(planned.map((p) => p.eventId));
        const settled = events.filter((e) => !plannedIds.has(e.id)).map((e) => e.id);
        if (settled.length) await trx('events').whereIn('id', settled).update({ dispatched_at: trx.fn.now() });
        return planned;
      });
    },
    /**
     * Of these deliveries, those whose endpoint asked for per-subscription order and whose event
     * belongs to a subscription (issue 12), with the key and outbox sequence the ordered workflow
     * needs. One indexed query per hand-over; events of no subscription are not ordered.
     */
    async ordered(deliveryIds: readonly string[]): Promise<OrderedDelivery[]> {
      if (deliveryIds.length === 0) return [];
      const rows: { id: string; endpoint_id: string; subscription_id: string | null; seq: string }[] = await knex()(
        'webhook_deliveries as d',
      )
        .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .join('events as ev', 'ev.id', 'd.event_id')
        .whereIn('d.id', deliveryIds)
        .where('e.ordering', 'per_subscription')
        .select(
          'd.id',
          'd.endpoint_id',
          'ev.seq',
          knex().raw(
            `coalesce(ev.data->>'subscription_id', case when ev.type like 'subscription.%' then ev.data->>'id' end) as subscription_id`,
          ),
        );
      return rows
        .filter((r) => r.subscription_id)
        .map((r) => ({
          deliveryId: r.id,
          endpointId: r.endpoint_id,
          subscriptionId: r.subscription_id!,
          seq: Number(r.seq),
        }));
    },
    /** The batcher holds these events' deliveries now (its signal is in Temporal's history). */
    async markDispatched(eventIds: readonly string[]): Promise<void> {
      if (eventIds.length)
        await knex()('events')
          .whereIn('id', eventIds)
          .whereNull('dispatched_at')
          .update({ dispatched_at: knex().fn.now() });
    },
  };
}

export type DeliveryPlanner = ReturnType<typeof deliveryPlanner>;

/** Per event: its explicit targets (test.ping), else every enabled endpoint of its org subscribed to its type. */
async function matchingEndpoints(
  trx: Knex.Transaction,
  events: readonly EventRow[],
): Promise<Map<string, EndpointRow[]>> {
  const matches = new Map<string, EndpointRow[]>();
  if (events.length === 0) return matches;
  const targets: { event_id: string; endpoint_id: string }[] = await trx('webhook_event_targets')
    .whereIn(
      'event_id',
      events.map((e) => e.id),
    )
    .select('event_id', 'endpoint_id');
  const orgs = [...new Set(events.map((e) => e.org_id))];
  const endpoints: EndpointRow[] = await trx('webhook_endpoints')
    .whereIn('org_id', orgs)
    .where({ status: 'enabled' }) // a disabled endpoint gets nothing until PATCH re-enables it
    .whereNull('deleted_at')
    .orderBy('id')
    .select('id', 'org_id', 'event_types', 'ordering');
  const byOrg = new Map<string, EndpointRow[]>();
  for (const ep of endpoints) byOrg.set(ep.org_id, [...(byOrg.get(ep.org_id) ?? []), ep]);
  const aimedAt = new Map<string, Set<string>>();
  for (const t of targets) aimedAt.set(t.event_id, (aimedAt.get(t.event_id) ?? new Set()).add(t.endpoint_id));
  for (const e of events) {
    const aimed = aimedAt.get(e.id);
    const ids = (byOrg.get(e.org_id) ?? []).filter((ep) =>
      aimed ? aimed.has(ep.id) : ep.event_types.includes('*') || ep.event_types.includes(e.type),
    );
    matches.set(e.id, ids);
  }
  return matches;
}

/** The subscription an event belongs to, for per-subscription order (issue 12); the same rule as the ordered lookup. */
function subscriptionOf(e: EventRow): string | null {
  const data = (e.data ?? {}) as Record<string, unknown>;
  if (typeof data.subscription_id === 'string') return data.subscription_id;
  if (e.type.startsWith('subscription.') && typeof data.id === 'string') return data.id;
  return null;
}
