import type { Knex } from '@mikro-orm/postgresql';
import { preparedStatement } from '../../db/prepared';
import type { BehaviourSet } from '../../lib/behaviour-set';
import { groupCommit } from '../../lib/group-commit';
import { hopNow, type HopLog } from '../../lib/runtime/hop-log';
import { activeTraceparent, tracingOn } from '../../lib/runtime/tracing';
import { addTime, currentTimes, timed, type RequestTimes } from '../../lib/runtime/request-timing';
import type { ServiceEvent } from '../../domain/events';
import { collect, eventInput, PLAN, planBindings, type Row } from './publish';

/** What publishing an event aimed at one endpoint came to. */
export type AimedOutcome =
  | { kind: 'published'; eventId: string; deliveryId: string }
  | { kind: 'endpoint_missing' }
  | { kind: 'endpoint_disabled' };

/**
 * Publishes events each aimed at one endpoint of its organisation (spec §4.3: the test operation),
 * and only while that endpoint is enabled: the endpoint is looked up in the statement that stores
 * the event and its delivery, so a disable that commits first leaves no event behind. Requests
 * that arrive while a statement is in flight are published together by the next one (group
 * commit): under load one statement and one notification serve many requests; alone, one waits
 * for nothing. Each caller gets its own outcome.
 */
export function aimedPublisher(knex: () => Knex, set: BehaviourSet, hops?: HopLog) {
  const publish = groupCommit(
    async (
      items: {
        event: ServiceEvent;
        endpointId: string;
        traceparent?: string;
        queuedAt?: number;
        times?: RequestTimes;
      }[],
    ): Promise<AimedOutcome[]> => {
      const input = items.map(({ event, endpointId, traceparent }, ord) => ({
        ...eventInput(event, ord, traceparent),
        endpoint_id: endpointId,
      }));
      const startedAt = hops?.on ? hopNow() : 0;
      const timedFrom = items.some((i) => i.times) ? performance.now() : 0;
      const rows = await PUBLISH_AIMED(knex(), [JSON.stringify(input), ...planBindings(set)]);
      if (startedAt) markHops(hops!, items, rows, startedAt);
      // Every request the statement carried waited for all of it (API_REQUEST_TIMING).
      if (timedFrom)
        for (const { times } of items) if (times) addTime(times, 'publish_statement', performance.now() - timedFrom);
      const status = new Map(rows.filter((r) => r.kind === 'endpoint').map((r) => [r.event_id, r.delivery_id]));
      const delivered = new Map(collect(rows).deliveries.map((d) => [d.eventId, d.deliveryId]));
      return items.map(({ event }) => {
        const deliveryId = delivered.get(event.id);
        if (deliveryId) return { kind: 'published', eventId: event.id, deliveryId };
        return status.has(event.id) ? { kind: 'endpoint_disabled' } : { kind: 'endpoint_missing' };
      });
    },
    { maxBatch: 200 },
  );
  // Traced, each caller's span is taken now: the batch runs in whichever caller's context started it.
  const send = (item: { event: ServiceEvent; endpointId: string; times?: RequestTimes }) => {
    const marked = hops?.on ? { ...item, queuedAt: hopNow() } : item;
    return tracingOn() ? publish({ ...marked, traceparent: activeTraceparent() }) : publish(marked);
  };
  return (item: { event: ServiceEvent; endpointId: string }) => {
    // A request being timed learns its share of the statement by hand: the batch runs in another request's scope.
    const times = currentTimes();
    return times ? timed('publish_wait', () => send({ ...item, times })) : send(item);
  };
}

/** The benchmark's hops on the API's side (lib/runtime/hop-log.ts): queued for the statement, statement sent, committed. */
function markHops(hops: HopLog, items: readonly { event: ServiceEvent; queuedAt?: number }[], rows: Row[], s: number) {
  const c = hopNow();
  const delivered = new Map(collect(rows).deliveries.map((d) => [d.eventId, d.deliveryId]));
  for (const { event, queuedAt } of items) {
    const d = delivered.get(event.id);
    if (d && queuedAt) hops.mark({ d, e: event.id, q: queuedAt, s, c });
  }
}

/** The publish statement with each event's one target looked up first; `endpoint` rows say what was found (status in the last column). */
const PUBLISH_AIMED = preparedStatement<Row>(
  'webhooks-publish-aimed',
  `with
  input as (select * from jsonb_to_recordset(?::jsonb)
              as v(ord int, id uuid, org_id uuid, type text, source text, data jsonb, occurred_at timestamptz, body text,
                   traceparent text, endpoint_id uuid)),
  found as (select i.id as event_id, e.id as endpoint_id, e.status
              from input i join webhook_endpoints e
                on e.id = i.endpoint_id and e.org_id = i.org_id and e.deleted_at is null),
  aimed as (select event_id, endpoint_id from found where status = 'enabled'),
  ev as (insert into events (id, org_id, type, source, data, occurred_at, dispatched_at, traceparent)
         select i.id, i.org_id, i.type, i.source, i.data, i.occurred_at, now(), i.traceparent
           from input i join aimed a on a.event_id = i.id order by i.ord
         on conflict (id) do nothing
         returning id, seq, org_id, type, data),
  stored_targets as (insert into webhook_event_targets (event_id, endpoint_id)
         select a.event_id, a.endpoint_id from aimed a join ev on ev.id = a.event_id
         on conflict do nothing),
  ${PLAN}
  union all
  select 'endpoint', f.event_id::text, f.endpoint_id::text, f.status::text from found f`,
);

/**
 * Prepares the aimed publish statement on `connections` pool connections at once (the API's
 * start-up warm-up, docs/decisions/0302-warm-before-ready.md): an empty input stores nothing and
 * notifies no one.
 */
export async function warmAimedPublish(knex: Knex, set: BehaviourSet, connections: number): Promise<void> {
  await Promise.all(Array.from({ length: connections }, () => PUBLISH_AIMED(knex, ['[]', ...planBindings(set)])));
}
