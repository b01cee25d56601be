import type { Knex } from '@mikro-orm/postgresql';
import { preparedStatement } from '../../db/prepared';
import type { BehaviourSet } from '../../lib/behaviour-set';
import { EXPLICIT_ONLY_EVENT_TYPES, supportedEventTypes, type ServiceEvent } from '../../domain/events';
import { renderEventBody } from '../secrets/signing';
import { activeTraceparent } from '../../lib/runtime/tracing';

/**
 * The channel a publishing transaction notifies at commit; every worker's dispatcher listens
 * (webhooks/dispatch/listener.ts). The payload is `ordered` when deliveries for an ordered workflow were queued.
 */
export const QUEUE_CHANNEL = 'webhook_queue';

export interface Published {
  /** The events this call stored; an event id already stored (a retried publish) is not stored again. */
  eventIds: string[];
  /** One per matching endpoint of each stored event, queued for its first attempt. */
  deliveries: { eventId: string; endpointId: string; deliveryId: string }[];
}

export interface PublishOptions {
  set: BehaviourSet;
  /** Aims an event at these endpoints only, whatever they subscribe to (spec §4.3: the test operation). */
  targets?: readonly { eventId: string; endpointId: string }[];
}

/**
 * The publish path (spec §6.1), in ONE statement: store the events in the outbox, and for each
 * event of the set's types (§6.2; others are stored and dropped silently) its §6.3 body, a
 * delivery per matching enabled endpoint and the delivery's place in the queue, then notify the
 * dispatchers. Inside the caller's transaction when given one, so an event exists exactly when the
 * change that caused it does; the dispatchers hear of it at commit and not before. Nothing waits
 * for the delivery engine: the publisher is done once this commits.
 */
export async function publishEvents(
  db: Knex | Knex.Transaction,
  events: readonly ServiceEvent[],
  opts: PublishOptions,
): Promise<Published> {
  if (events.length === 0) return { eventIds: [], deliveries: [] };
  // Traced, each event keeps the publishing span's context for its deliveries' POSTs;
  // off, this is undefined and the JSON below carries nothing more.
  const traceparent = activeTraceparent();
  const input = events.map((e, ord) => eventInput(e, ord, traceparent));
  const targets = (opts.targets ?? []).map((t) => ({ event_id: t.eventId, endpoint_id: t.endpointId }));
  return collect(await PUBLISH(db, [JSON.stringify(input), JSON.stringify(targets), ...planBindings(opts.set)]));
}

/**
 * The same plan for events already in the outbox but never planned (stored before this engine, or
 * by hand): the sweep's safety net. Each is locked and marked in the statement that plans it, so
 * two workers never plan one event twice.
 */
export async function planStoredEvents(
  db: Knex,
  set: BehaviourSet,
  rows: readonly {
    id: string;
    org_id: string;
    type: string;
    source: string;
    occurred_at: Date | string;
    data: unknown;
  }[],
): Promise<Published> {
  if (rows.length === 0) return { eventIds: [], deliveries: [] };
  const input = rows.map((r) => ({ id: r.id, body: renderEventBody(r) }));
  return collect(await PLAN_STORED(db, [JSON.stringify(input), ...planBindings(set)]));
}

/**
 * One event as the publishing statements take it: its columns, its §6.3 body and (traced) the W3C
 * traceparent of the span that published it.
 */
export const eventInput = (e: ServiceEvent, ord: number, traceparent?: string) => ({
  ord,
  id: e.id,
  org_id: e.orgId,
  type: e.type,
  source: e.source,
  data: e.data,
  occurred_at: e.occurredAt,
  body: renderEventBody({ ...e, org_id: e.orgId, occurred_at: e.occurredAt }),
  traceparent,
});

/** The plan's own bindings, after its head's: the set's types, the types only named endpoints get, the channel. */
export const planBindings = (set: BehaviourSet) => [
  JSON.stringify(supportedEventTypes(set)),
  JSON.stringify(EXPLICIT_ONLY_EVENT_TYPES),
  QUEUE_CHANNEL,
];

export type Row = { kind: string; event_id: string; endpoint_id: string; delivery_id: string };

export function collect(rows: readonly Row[]): Published {
  const published: Published = { eventIds: [], deliveries: [] };
  for (const r of rows) {
    if (r.kind === 'event') published.eventIds.push(r.event_id);
    else if (r.kind === 'delivery')
      published.deliveries.push({ eventId: r.event_id, endpointId: r.endpoint_id, deliveryId: r.delivery_id });
  }
  return published;
}

/**
 * The subscription an event belongs to, for endpoints that keep per-subscription order:
 * `subscription_id` in its data, or its own id for a subscription event. Events of no subscription
 * are not ordered.
 */
const ORDERED_KEY = `coalesce(ev.data->>'subscription_id', case when ev.type like 'subscription.%' then ev.data->>'id' end)`;

/**
 * An endpoint is never told about itself through itself (docs/decisions/0415-operational-events.md):
 * not a `webhook.*` event whose `endpoint_id` is its own. Over events `ev` and the endpoint `e`.
 */
export const NOT_ABOUT_ITSELF = `not (ev.type like 'webhook.%' and ev.data->>'endpoint_id' = e.id::text)`;

/**
 * What every publish does once its events are in hand (`ev`: id, seq, org, type, data; `aimed`:
 * explicit targets; `input`: each event's id and §6.3 body): match endpoints, store bodies,
 * deliveries and queue rows, notify. One row back per stored event and per delivery.
 */
export const PLAN = `
  matched as (
    select ev.id as event_id, ev.seq, ev.org_id, ev.type, e.id as endpoint_id, e.payload_version,
           case when e.ordering = 'per_subscription' then ${ORDERED_KEY} end as ordered_key
      from ev join webhook_endpoints e on e.org_id = ev.org_id and e.status = 'enabled' and e.deleted_at is null
     where ev.type in (select jsonb_array_elements_text(?::jsonb))
       and case when exists (select 1 from aimed a where a.event_id = ev.id)
                then exists (select 1 from aimed a where a.event_id = ev.id and a.endpoint_id = e.id)
                else (ev.type = any(e.event_types)
                      or ('*' = any(e.event_types) and ev.type not in (select jsonb_array_elements_text(?::jsonb))))
                     -- Its payload filter, compiled when set (webhooks/endpoints/payload-filter.ts); an aimed event is not filtered.
                     and (e.filter_path is null or jsonb_path_match(ev.data, e.filter_path, '{}', true) is true)
                     and ${NOT_ABOUT_ITSELF}
           end),
  bodies as (insert into webhook_event_bodies (event_id, body)
             select i.id, i.body from input i where exists (select 1 from matched m where m.event_id = i.id)
             on conflict (event_id) do nothing),
  -- Each delivery keeps the version its endpoint is pinned to now: every attempt of it sends that version
  -- (docs/decisions/0420-versioned-payloads.md); a later PATCH changes later deliveries only.
  deliveries as (insert into webhook_deliveries (id, event_id, endpoint_id, org_id, event_type, payload_version)
                 select webhook_delivery_id(m.event_id, m.endpoint_id), m.event_id, m.endpoint_id, m.org_id, m.type,
                        m.payload_version
                   from matched m
                 on conflict do nothing
                 returning id, event_id, endpoint_id),
  queued as (insert into webhook_queue (delivery_id, endpoint_id, org_id, ordered_key, event_seq)
             select d.id, d.endpoint_id, m.org_id, m.ordered_key, m.seq
               from deliveries d join matched m on m.event_id = d.event_id and m.endpoint_id = d.endpoint_id
              order by m.seq, d.endpoint_id
             returning delivery_id, ordered_key),
  notified as (select pg_notify(?, case when exists (select 1 from queued where ordered_key is not null)
                                        then 'ordered' else '' end)
                where exists (select 1 from queued))
  select 'event' as kind, ev.id::text as event_id, null as endpoint_id, null as delivery_id from ev
  union all
  select 'delivery', d.event_id::text, d.endpoint_id::text, d.id::text from deliveries d
  union all
  select 'notified', null, null, null from notified`;

const PUBLISH = preparedStatement<Row>(
  'webhooks-publish',
  `with
  input as (select * from jsonb_to_recordset(?::jsonb)
              as v(ord int, id uuid, org_id uuid, type text, source text, data jsonb, occurred_at timestamptz, body text,
                   traceparent text)),
  aimed as (select * from jsonb_to_recordset(?::jsonb) as t(event_id uuid, endpoint_id uuid)),
  ev as (insert into events (id, org_id, type, source, data, occurred_at, dispatched_at, traceparent)
         select id, org_id, type, source, data, occurred_at, now(), traceparent from input order by ord
         on conflict (id) do nothing
         returning id, seq, org_id, type, data),
  stored_targets as (insert into webhook_event_targets (event_id, endpoint_id)
         select a.event_id, a.endpoint_id from aimed a join ev on ev.id = a.event_id
         on conflict do nothing),
  ${PLAN}`,
);

const PLAN_STORED = preparedStatement<Row>(
  'webhooks-plan-stored',
  `with
  input as (select * from jsonb_to_recordset(?::jsonb) as v(id uuid, body text)),
  locked as (select e.id from events e join input i on i.id = e.id where e.dispatched_at is null
             order by e.id for update of e skip locked),
  ev as (update events e set dispatched_at = now() from locked where e.id = locked.id
         returning e.id, e.seq, e.org_id, e.type, e.data),
  aimed as (select t.event_id, t.endpoint_id from webhook_event_targets t join ev on ev.id = t.event_id),
  ${PLAN}`,
);
