import type { Knex } from '@mikro-orm/postgresql';
import { preparedStatement } from '../../db/prepared';
import type { BehaviourSet } from '../../lib/behaviour-set';
import { EXPLICIT_ONLY_EVENT_TYPES, supportedEventTypes } from '../../domain/events';
import { collect, NOT_ABOUT_ITSELF, PLAN, planBindings, type Row } from './publish';
import { renderEventBody } from '../secrets/signing';

/**
 * The events an endpoint subscribes to (its types, or `*` without the types only named endpoints get,
 * within the set's, and its payload filter) but holds no delivery of: published while it was disabled, or before it existed.
 * Aimed events (test pings) are their targets' alone. An event not planned yet is the sweep's
 * (webhooks/dispatch/sweep.ts), which plans it for every endpoint enabled then. Nor is news of the endpoint itself
 * (NOT_ABOUT_ITSELF) missing: it never gets that. `e` is the endpoint, `ev` the
 * events; the bindings are the set's types and the explicit-only types.
 */
const NEVER_RECEIVED = `
  ev.org_id = e.org_id
  and ev.dispatched_at is not null
  and ev.type in (select jsonb_array_elements_text(?::jsonb))
  and (ev.type = any(e.event_types)
       or ('*' = any(e.event_types) and ev.type not in (select jsonb_array_elements_text(?::jsonb))))
  and (e.filter_path is null or jsonb_path_match(ev.data, e.filter_path, '{}', true) is true)
  and ${NOT_ABOUT_ITSELF}
  and not exists (select 1 from webhook_event_targets t where t.event_id = ev.id)
  and not exists (select 1 from webhook_deliveries d where d.id = webhook_delivery_id(ev.id, e.id))`;

const typeBindings = (set: BehaviourSet) => [
  JSON.stringify(supportedEventTypes(set)),
  JSON.stringify(EXPLICIT_ONLY_EVENT_TYPES),
];

/**
 * Every read of missing events: `select <columns> from <endpoints, as e> join events ev on NEVER_RECEIVED
 * where <rest>`, the set's type bindings first, then the query's own.
 */
async function readMissing<T>(
  knex: Knex,
  set: BehaviourSet,
  q: { select: string; endpoints: string; rest: string },
  bindings: readonly Knex.RawBinding[],
): Promise<T[]> {
  const { rows } = (await knex.raw(
    `select ${q.select} from ${q.endpoints} join events ev on ${NEVER_RECEIVED} where ${q.rest}`,
    [...typeBindings(set), ...bindings],
  )) as { rows: T[] };
  return rows;
}

/** How many events stored from `since` to `until` the endpoint never received: a recovery's first total. */
export async function missingCount(
  knex: Knex,
  q: { endpointId: string; since: Date; until: Date; set: BehaviourSet },
): Promise<number> {
  const rows = await readMissing<{ n: number }>(
    knex,
    q.set,
    {
      select: 'count(*)::int as n',
      endpoints: 'webhook_endpoints e',
      rest: 'e.id = ? and ev.created_at between ? and ?',
    },
    [q.endpointId, q.since, q.until],
  );
  return rows[0]?.n ?? 0;
}

interface StoredEvent {
  id: string;
  seq: string;
  org_id: string;
  type: string;
  source: string;
  occurred_at: Date;
  data: unknown;
}

/**
 * The next `limit` events the recovery's endpoint never received, after its cursor, in publication order;
 * the window is read in SQL, at the microsecond the recovery's row holds.
 */
const nextMissing = (knex: Knex, recoveryId: string, set: BehaviourSet, limit: number) =>
  readMissing<StoredEvent>(
    knex,
    set,
    {
      select: 'ev.id, ev.seq::text as seq, ev.org_id, ev.type, ev.source, ev.occurred_at, ev.data',
      endpoints: 'webhook_recoveries r join webhook_endpoints e on e.id = r.endpoint_id',
      rest: `r.id = ?
        and ev.seq > coalesce(r.missing_cursor_seq, 0)
        and ev.created_at between r.since and r.until
      order by ev.seq
      limit ?`,
    },
    [recoveryId, limit],
  );

/**
 * Plans one endpoint's deliveries of stored events, as publish does (one statement: bodies, deliveries,
 * queue rows in `seq` order, notify). A delivery's id is its event's and endpoint's, so an event planned
 * twice (a retried page, a publish at the same moment) is still one delivery.
 */
const PLAN_FOR_ENDPOINT = preparedStatement<Row>(
  'webhooks-plan-missing',
  `with
  input as (select * from jsonb_to_recordset(?::jsonb) as v(id uuid, body text)),
  ev as (select e.id, e.seq, e.org_id, e.type, e.data from events e join input i on i.id = e.id),
  aimed as (select i.id as event_id, ?::uuid as endpoint_id from input i),
  ${PLAN}`,
);

export interface MissingPage {
  /** Events read: the page is the last when fewer than asked. */
  read: number;
  planned: number;
  /** The last event's seq read, the cursor to store. */
  lastSeq: string | null;
}

/** One page of replay missing: the next events the endpoint never received, planned for it. */
export async function planMissingPage(
  knex: Knex,
  o: { recoveryId: string; endpointId: string; set: BehaviourSet; limit: number },
): Promise<MissingPage> {
  const events = await nextMissing(knex, o.recoveryId, o.set, o.limit);
  if (events.length === 0) return { read: 0, planned: 0, lastSeq: null };
  const input = events.map((e) => ({ id: e.id, body: renderEventBody(e) }));
  const planned = collect(await PLAN_FOR_ENDPOINT(knex, [JSON.stringify(input), o.endpointId, ...planBindings(o.set)]))
    .deliveries.length;
  return { read: events.length, planned, lastSeq: events[events.length - 1]!.seq };
}
