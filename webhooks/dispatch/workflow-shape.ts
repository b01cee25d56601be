import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { Knex } from '@mikro-orm/postgresql';
import {
  DELIVERY_WORKFLOW,
  deliveryPriority,
  deliveryWorkflowId,
  runOwner,
  type AttemptInput,
  type ChildDelivery,
  type DeliveryInput,
} from '../../domain/webhook-messages';
import { ATTEMPT_DELAYS_MS } from '../../domain/retry-schedule';
import { WebhookDeliveryStatusKey, WebhookEndpointIdKey, WebhookEventTypeKey } from '../../domain/search-attributes';
import { logger } from '../../lib/runtime/logger';
import { recordDeliveryWorkflowStart, recordFirstAttemptBegun } from '../../lib/runtime/metrics';
import { preparedStatement, runPrepared } from '../../db/prepared';
import { endLeases, LEASE_MS, unleased } from '../deliveries/leases';
import type { UnclaimedStarts } from '../attempts/unclaimed-starts';

/**
 * One call takes the oldest queued deliveries of up to this many endpoints, and up to this many of
 * each: a burst to one endpoint waits its turn behind one call, never behind its whole backlog, so
 * another endpoint's delivery starts within a call (docs/decisions/0325-workflow-shape-fairness-keys.md).
 */
const ENDPOINTS_PER_CALL = 64;
const PER_ENDPOINT = 8;
/** Where the endpoint walk starts when no call has left off anywhere. */
const FIRST_ENDPOINT = '00000000-0000-0000-0000-000000000000';
/** Workflow starts in flight at once: each is one round trip to the Temporal frontend. */
const STARTS_AT_ONCE = 64;

/**
 * The search attributes a delivery's workflow starts with (the Web UI's filters): no personal data,
 * only the endpoint's id, the event's type and where the delivery stands.
 */
const deliverySearchAttributes = (d: Pick<ChildDelivery, 'endpointId' | 'eventType'>, status: string) => [
  { key: WebhookEndpointIdKey, value: d.endpointId },
  { key: WebhookEventTypeKey, value: d.eventType },
  { key: WebhookDeliveryStatusKey, value: status },
];

interface StartDeps {
  knex: () => Knex;
  temporal: Client;
  taskQueue: string;
  /**
   * Ask for each start's first task back in its answer (docs/decisions/0331-eager-delivery-starts.md); a
   * function says so at each start (worker/deployment-routing.ts).
   */
  eagerStarts?: boolean | (() => boolean);
}

/** The start path's own: what it started that no attempt has claimed yet, and an endpoint's default concurrency limit. */
export interface StartPath {
  unclaimed: UnclaimedStarts;
  defaultMaxInFlight: number;
  /**
   * Begins attempt 1 of a run whose first task came back to this process in the start's answer; the
   * run's local activity joins it (docs/decisions/0358-first-attempt-begun-at-the-start.md).
   */
  beginFirstAttempt?: (input: AttemptInput) => boolean;
}

/**
 * `workflow` shape (docs/decisions/0297-webhook-delivery-shape-as-a-setting.md), for events the API
 * or the engine publishes (test pings, identity events, an endpoint's disable notice, events the
 * sweep plans): each queued delivery becomes a top-level delivery workflow from attempt 1 instead
 * of a dispatcher's POST (docs/decisions/0298-workflow-shape-parents.md). A queue row is leased
 * while its workflow starts and deleted only once it is started (or found started: a subscription
 * workflow's child, a manual retry), so a crash or a Temporal outage delays a delivery and never
 * loses it (webhooks/deliveries/leases.ts); the workflow id is the delivery's, so it never runs twice at once.
 * Endpoints are taken in turn, as the dispatcher's round takes them (docs/decisions/0175-dispatch-round.md),
 * from where the call before left off (`walk`, the engine's). Answers how many rows were handled.
 */
export async function startQueuedDeliveries(
  deps: StartDeps,
  path: StartPath,
  walk: { after: string } = { after: FIRST_ENDPOINT },
): Promise<number> {
  // Window after window from where the last call left off, round to it again, until one starts something.
  const from = walk.after;
  let wrapped = false;
  for (;;) {
    const handled = await startSome(deps, path, walk);
    if (handled > 0) return handled;
    // At the end of the queue's endpoints: done if the call began at their start, else round again.
    if (walk.after === FIRST_ENDPOINT) {
      if (wrapped || from === FIRST_ENDPOINT) return 0;
      wrapped = true;
    } else if (wrapped && walk.after >= from) return 0;
  }
}

async function startSome(deps: StartDeps, path: StartPath, walk: { after: string }): Promise<number> {
  // Leased in one committed statement, not locked across the starts (docs/decisions/0332-leases-not-locks.md).
  // Each endpoint gets no more than its room: its concurrency limit (and rate limit, a second's worth)
  // less its attempts not yet ended, from every worker, and the starts of this process no attempt has
  // claimed yet (docs/decisions/0340-workflow-starts-within-the-endpoints-room.md). The rest stays
  // queued until an attempt to the endpoint ends. One row per endpoint seen, with no delivery when it
  // has no room, so the walk goes on past full endpoints.
  const rows = await runPrepared(deps.knex(), START_TAKE, [
    walk.after,
    ENDPOINTS_PER_CALL,
    JSON.stringify(path.unclaimed.entries()),
    PER_ENDPOINT,
    path.defaultMaxInFlight,
    LEASE_MS,
  ]);
  // A full call goes on after its last endpoint next time; a short one has seen them all, so the
  // next starts from the first again.
  const endpoints = [...new Set(rows.map((r) => r.endpoint_id))].sort();
  walk.after = endpoints.length >= ENDPOINTS_PER_CALL ? endpoints[endpoints.length - 1]! : FIRST_ENDPOINT;
  const starts = rows.filter((r): r is (typeof rows)[number] & { delivery_id: string } => r.delivery_id !== null);
  if (starts.length === 0) return 0;
  const started: string[] = [];
  const waiting: string[] = [];
  for (let i = 0; i < starts.length; i += STARTS_AT_ONCE) {
    await Promise.all(
      starts.slice(i, i + STARTS_AT_ONCE).map(async (r) => {
        // Counted before its first task can run, which may come back in the start's answer.
        path.unclaimed.add(r.delivery_id, r.endpoint_id);
        const runs = await startTopLevel(
          deps,
          { deliveryId: r.delivery_id, endpointId: r.endpoint_id, eventType: r.event_type, orgId: r.org_id },
          path.beginFirstAttempt,
        );
        if (!runs) path.unclaimed.claimed(r.delivery_id);
        (runs ? started : waiting).push(r.delivery_id);
      }),
    );
  }
  await endLeases(deps.knex(), 'webhook_queue', started, waiting);
  return started.length;
}

/**
 * The start path's take: one committed statement that leases the oldest queued deliveries of the
 * endpoints after `walk.after`, each endpoint's within its room, on its generic plan
 * (docs/decisions/0353-workflow-shape-statements-planned-once.md).
 */
const START_TAKE = preparedStatement<{
  delivery_id: string | null;
  endpoint_id: string;
  event_type: string;
  org_id: string;
}>(
  'webhooks-start-take',
  `with recursive eps as (
           (select endpoint_id from webhook_queue where ordered_key is null and endpoint_id > ?::uuid
             order by endpoint_id limit 1)
           union all
           select (select q.endpoint_id from webhook_queue q
                    where q.ordered_key is null and q.endpoint_id > eps.endpoint_id order by q.endpoint_id limit 1)
             from eps where eps.endpoint_id is not null),
         found as (select endpoint_id from eps where endpoint_id is not null limit ?),
         open_attempts as (
           select d.endpoint_id, count(*)::int as n
             from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
            where a.duration_ms is null and d.endpoint_id = any(array(select endpoint_id from found))
            group by d.endpoint_id),
         -- Started here (or throttled here) and not claimed by any worker yet.
         unclaimed as (
           select u.endpoint_id, count(*)::int as n
             from jsonb_to_recordset(?::jsonb) as u(delivery_id uuid, endpoint_id uuid)
            where not exists (select 1 from webhook_attempts a where a.delivery_id = u.delivery_id)
            group by u.endpoint_id),
         room as (
           select f.endpoint_id,
                  greatest(0, least(?::int, least(coalesce(e.max_in_flight, ?::int),
                                                  coalesce(e.rate_limit_per_second, 2147483647))
                                            - coalesce(o.n, 0) - coalesce(u.n, 0)))::int as take
             from found f join webhook_endpoints e on e.id = f.endpoint_id
             left join open_attempts o on o.endpoint_id = f.endpoint_id
             left join unclaimed u on u.endpoint_id = f.endpoint_id),
         picked as (
           select t.delivery_id, t.endpoint_id, t.seq, t.event_type, t.org_id
             from room
            cross join lateral (
                  select q.delivery_id, q.endpoint_id, q.seq, d.event_type, d.org_id
                    from webhook_queue q join webhook_deliveries d on d.id = q.delivery_id
                   where q.endpoint_id = room.endpoint_id and q.ordered_key is null and ${unleased('q')}
                   order by q.seq limit room.take for update of q skip locked) t),
         leased as (update webhook_queue q set leased_until = now() + (? * interval '1 millisecond')
                      from picked p where q.delivery_id = p.delivery_id
                    returning q.delivery_id)
   select p.delivery_id, room.endpoint_id, p.event_type, p.org_id
     from room
     left join (picked p join leased using (delivery_id)) on p.endpoint_id = room.endpoint_id
    order by row_number() over (partition by room.endpoint_id order by p.seq), p.seq`,
);

/** Starts one delivery's workflow; answers whether it runs now (started here or before), false when it must wait. */
async function startTopLevel(
  deps: Omit<StartDeps, 'knex'>,
  d: ChildDelivery & { orgId: string },
  beginFirstAttempt: StartPath['beginFirstAttempt'],
): Promise<boolean> {
  try {
    const handle = await deps.temporal.workflow.start<(input: DeliveryInput) => Promise<unknown>>(DELIVERY_WORKFLOW, {
      taskQueue: deps.taskQueue,
      workflowId: deliveryWorkflowId(d.deliveryId),
      args: [{ deliveryId: d.deliveryId, statusShown: true }],
      // A closed run (a manual retry's, ended) is not a reason to send attempt 1 again.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: deliverySearchAttributes(d, 'pending'),
      // One organisation's burst does not queue another's (docs/decisions/0325-workflow-shape-fairness-keys.md).
      priority: deliveryPriority(d.orgId),
      // Its first workflow task comes back in the start's answer when this process's worker has a
      // free slot; otherwise the server queues it as usual (docs/decisions/0331-eager-delivery-starts.md).
      ...(eagerNow(deps.eagerStarts) && { requestEagerStart: true }),
    });
    recordDeliveryWorkflowStart(handle.eagerlyStarted);
    // Its first task is this process's: the attempt it is about to ask for begins now, with the input
    // the run's first attempt has (workflows/webhook-delivery.ts), and its local activity joins it.
    const begun =
      handle.eagerlyStarted &&
      beginFirstAttempt?.({
        deliveryId: d.deliveryId,
        number: 1,
        attemptedAt: new Date().toISOString(),
        nextDelayMs: ATTEMPT_DELAYS_MS[1] ?? null,
        owner: runOwner(handle.firstExecutionRunId),
      });
    if (begun) recordFirstAttemptBegun();
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return true;
    logger.warn({ err, deliveryId: d.deliveryId }, 'delivery workflow not started; it stays queued');
    return false;
  }
}

/**
 * `workflow` shape, inside a subscription workflow's publishing transaction
 * (activities/subscription-projection.ts): the deliveries of these events that the subscription
 * workflow starts as its own children, taken off the queue so no engine starts them too. Answers
 * every such delivery of the events, not only those this call created, so a re-run of the
 * transaction (a lost workflow task runs its local activity again) answers the same children.
 * Deliveries of endpoints that keep per-subscription order stay queued for their ordered workflow.
 * At most `room` are taken, in the events' order: the parent holds no more pending children than
 * Temporal allows, and the rest stay queued for startQueuedDeliveries, as top-level workflows
 * (docs/decisions/0367-temporal-limits-kept.md). The same call again takes the same ones.
 */
export async function takeForParent(
  trx: Knex.Transaction,
  eventIds: readonly string[],
  room = Number.MAX_SAFE_INTEGER,
): Promise<ChildDelivery[]> {
  if (eventIds.length === 0 || room <= 0) return [];
  const rows: { id: string; endpoint_id: string; event_type: string; org_id: string }[] = (
    await trx.raw(
      `with mine as (select d.id, d.endpoint_id, d.event_type, d.org_id, ev.seq from webhook_deliveries d
                       join events ev on ev.id = d.event_id
                      where d.event_id = any(?::uuid[])
                        and not exists (select 1 from webhook_queue q where q.delivery_id = d.id and q.ordered_key is not null)
                        and not exists (select 1 from webhook_endpoints e
                                         where e.id = d.endpoint_id and e.ordering = 'per_subscription')
                      order by ev.seq, d.endpoint_id, d.id
                      limit ?),
            taken as (delete from webhook_queue q using mine where q.delivery_id = mine.id)
       select m.id, m.endpoint_id, m.event_type, m.org_id from mine m
        order by m.seq, m.endpoint_id, m.id`,
      [[...eventIds], room],
    )
  ).rows;
  return rows.map((r) => ({ deliveryId: r.id, endpointId: r.endpoint_id, eventType: r.event_type, orgId: r.org_id }));
}

const eagerNow = (eager: StartDeps['eagerStarts']) => (typeof eager === 'function' ? eager() : Boolean(eager));
