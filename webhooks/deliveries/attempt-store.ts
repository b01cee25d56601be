import type { Knex } from '@mikro-orm/postgresql';
import { preparedStatement, preparedTransaction, runPrepared } from '../../db/prepared';
import type { AttemptInput } from '../../domain/webhook-messages';
import { AUTOMATIC_ATTEMPTS, nextAttemptDelay } from '../../domain/retry-schedule';
import type { EndpointAuthentication, EndpointHeader } from '../../db/entities/webhook-rows';

export interface Target {
  delivery_id: string;
  event_id: string;
  event_type: string;
  status: string;
  endpoint_id: string;
  org_id: string;
  url: string;
  secret_ciphertext: string;
  /** The secret before the last rotation, still signing webhook-signature until it expires. */
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
  deleted_at: Date | null;
  /** The endpoint's `enabled` | `disabled`: a disabled endpoint gets no further attempt. */
  endpoint_status: string;
  /** The event's stored version-1 body; the attempt sends it in `payload_version` (domain/payload-versions.ts). */
  body: string;
  payload_version: string;
  occurred_at: Date;
  /** The W3C traceparent of the span that published the event, null when tracing was off. */
  traceparent: string | null;
  /** The endpoint asked for `traceparent` on its POSTs. */
  send_traceparent: boolean;
  /** Transport authentication, read with the endpoint's row; null for most endpoints. */
  authentication: EndpointAuthentication | null;
  /** Its client key or client secret, sealed (webhooks/secrets/authentication.ts names what it is sealed to). */
  authentication_secret_ciphertext: string | null;
  /** Static headers every POST carries (webhooks/endpoints/custom-headers.ts); null for most endpoints. */
  headers: EndpointHeader[] | null;
  /** Their secret values, sealed to the endpoint's headers. */
  headers_secret_ciphertext: string | null;
}

/** What a claim found: a fresh attempt to make, or a row this owner or another already holds. */
export type Claim =
  | { kind: 'fresh' }
  | { kind: 'in_doubt' } // this owner's row without a result: the worker died between claim and record
  | { kind: 'recorded'; responseStatus: number | null; retryAfterMs: number | null } // this owner's finished row: a replay, not a new POST
  | { kind: 'other_owner' };

export interface Finished {
  input: AttemptInput;
  durationMs: number | null;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  /** The wait the endpoint asked for (Retry-After, capped), when it answered with one. */
  retryAfterMs: number | null;
  /**
   * The request headers as sent, signature headers included (never the secret); null when nothing
   * was sent. The body is not kept per attempt: it is the event's stored body, byte for byte.
   */
  requestHeaders: Record<string, string> | null;
}

/** The columns of a Target, over `webhook_deliveries d`, `webhook_endpoints e`, bodies `b` and `events ev`. */
export const TARGET_COLUMNS = `d.id as delivery_id, d.event_id, d.event_type, d.status, d.endpoint_id, d.org_id, e.url,
  e.secret_ciphertext, e.previous_secret_ciphertext, e.previous_secret_expires_at, e.deleted_at,
  e.status as endpoint_status, b.body, d.payload_version, ev.occurred_at, ev.traceparent, e.send_traceparent,
  e.authentication, e.authentication_secret_ciphertext, e.headers, e.headers_secret_ciphertext`;

export async function loadTargets(knex: Knex, deliveryIds: readonly string[]): Promise<Map<string, Target>> {
  if (deliveryIds.length === 0) return new Map();
  const rows = await runPrepared(knex, LOAD_TARGETS, [deliveryIds]);
  return new Map(rows.map((r) => [r.delivery_id, r]));
}

/**
 * Records every attempt's start before its POST, in one transaction
 * (docs/decisions/0151-attempt-recorded-before-post.md): whatever happens to the worker afterwards, the
 * attempt exists. An attempt number already held is not taken again. The delivery row is left alone until the
 * result (recordResults): every change to it rewrites all six of its index entries, and this keeps that to
 * once per attempt.
 */
export async function claimAttempts(knex: Knex, inputs: readonly AttemptInput[]): Promise<Map<string, Claim>> {
  const claims = new Map<string, Claim>();
  if (inputs.length === 0) return claims;
  // One statement, committed on its own: the attempt exists before its POST is sent.
  const rows = inputs.map((i) => ({
    delivery_id: i.deliveryId,
    number: i.number,
    attempted_at: i.attemptedAt,
    owner: i.owner,
  }));
  const inserted: { delivery_id: string }[] = (
    await knex.raw(
      `insert into webhook_attempts (delivery_id, number, attempted_at, owner)
       select v.delivery_id, v.number, v.attempted_at, v.owner from jsonb_to_recordset(?::jsonb) as v(delivery_id uuid, number int, attempted_at timestamptz, owner text)
       on conflict (delivery_id, number) do nothing
       returning delivery_id`,
      [JSON.stringify(rows)],
    )
  ).rows;
  const fresh = new Set(inserted.map((r) => r.delivery_id));
  for (const i of inputs) if (fresh.has(i.deliveryId)) claims.set(i.deliveryId, { kind: 'fresh' });
  const held = inputs.filter((i) => !fresh.has(i.deliveryId));
  if (held.length) {
    const existing: {
      delivery_id: string;
      number: number;
      owner: string | null;
      duration_ms: number | null;
      response_status: number | null;
      retry_after_ms: string | null;
    }[] = await knex('webhook_attempts')
      .whereIn(
        ['delivery_id', 'number'],
        held.map((i) => [i.deliveryId, i.number]),
      )
      .select('delivery_id', 'number', 'owner', 'duration_ms', 'response_status', 'retry_after_ms');
    const byId = new Map(existing.map((r) => [r.delivery_id, r]));
    for (const i of held) {
      const row = byId.get(i.deliveryId);
      if (!row || row.owner !== i.owner) claims.set(i.deliveryId, { kind: 'other_owner' });
      else if (row.duration_ms === null) claims.set(i.deliveryId, { kind: 'in_doubt' });
      else
        claims.set(i.deliveryId, {
          kind: 'recorded',
          responseStatus: row.response_status,
          retryAfterMs: row.retry_after_ms === null ? null : Number(row.retry_after_ms),
        });
    }
  }
  return claims;
}

/** Results, inside the caller's transaction: the attempt rows and their deliveries' new status. */
export async function recordResults(trx: Knex.Transaction, results: readonly Finished[]): Promise<void> {
  if (results.length === 0) return;
  const rows = resultRows(results);
  await RECORD_ATTEMPTS(trx, [rows.attempts, rows.ids]);
  await RECORD_DELIVERIES(trx, [rows.deliveries, rows.ids]);
}

/**
 * Results that are all successes, with what they say of their endpoints, in ONE statement: the
 * attempt rows, the deliveries, each endpoint's circuit closed and "failing since" cleared where
 * they were not already. The hot path's record. Sent with its `begin` and `commit` in one round
 * trip, so it runs on its generic plan: left to choose, PostgreSQL planned it anew on most calls
 * (docs/decisions/0342-one-round-trip-per-statement.md). Answers the endpoints whose circuit this closed
 * (`closed`), and those whose failing spell was reported (`reported`): their spell is left for the caller
 * to end with its `webhook.endpoint.recovered` (docs/decisions/0415-operational-events.md).
 */
export async function recordSuccesses(knex: Knex, results: readonly Finished[], endpointIds: readonly string[]) {
  const rows = resultRows(results);
  const endpoints = [...new Set(endpointIds)].sort();
  return preparedTransaction(knex, (trx) =>
    trx.runAndCommit(RECORD_SUCCESSES, [
      rows.attempts,
      rows.ids,
      rows.deliveries,
      rows.ids,
      endpoints,
      endpoints,
      endpoints,
    ]),
  );
}

/** The JSON parameters of a record: attempt rows and delivery rows, in delivery order (one lock order for all writers). */
function resultRows(unordered: readonly Finished[]): { attempts: string; deliveries: string; ids: string[] } {
  const results = [...unordered].sort((a, b) => a.input.deliveryId.localeCompare(b.input.deliveryId));
  const attempts = results.map((r) => ({
    delivery_id: r.input.deliveryId,
    number: r.input.number,
    owner: r.input.owner,
    // A result with no measured duration (in doubt) still closes the row: 0 says "not measured".
    duration_ms: r.durationMs ?? 0,
    response_status: r.responseStatus,
    response_body: r.responseBody,
    error: r.error,
    retry_after_ms: r.retryAfterMs,
    // Text inside the parameter, so the json column keeps the map in the order it was sent.
    request_headers: r.requestHeaders && JSON.stringify(r.requestHeaders),
  }));
  const deliveries = results.map((r) => {
    const ok = isSuccess(r.responseStatus);
    const attemptedAt = new Date(r.input.attemptedAt).getTime();
    // The wait the schedule will take from this result: lengthened by a 429/503's Retry-After.
    const wait = ok ? null : nextAttemptDelay(r.input.nextDelayMs, r.responseStatus, r.retryAfterMs);
    const next = wait === null ? null : new Date(attemptedAt + (r.durationMs ?? 0) + wait).toISOString();
    return {
      id: r.input.deliveryId,
      status: deliveryStatus(ok, r.input.number),
      next_attempt_at: next,
      number: r.input.number,
      attempted_at: r.input.attemptedAt,
    };
  });
  const ids = results.map((r) => r.input.deliveryId);
  return { attempts: JSON.stringify(attempts), deliveries: JSON.stringify(deliveries), ids };
}

/** Why a delivery that never had its turn was ended without a request (docs/decisions/0290-nothing-left-pending.md). */
const ENDPOINT_DISABLED_NOT_SENT =
  'ENDPOINT_DISABLED: not sent, the endpoint was disabled before this delivery had its turn; re-enable it, then retry or recover';
const ENDPOINT_DELETED_NOT_SENT =
  'ENDPOINT_DELETED: not sent, the endpoint was deleted before this delivery had its turn';

/**
 * The endpoint was disabled or deleted: the deliveries wait for nothing more. One that was still
 * `pending` (queued, or held by an ordered workflow, and never attempted) ends `failed` with a
 * not-sent attempt that says why, so it is listed, recoverable once the endpoint is enabled again,
 * and pruned by retention like any other ended delivery; one with an attempt in flight is left to
 * that attempt's result. Others keep their status.
 */
export async function stopWaiting(knex: Knex, deliveryIds: readonly string[]): Promise<void> {
  if (deliveryIds.length)
    await knex.raw(STOP_WAITING, [[...deliveryIds].sort(), ENDPOINT_DELETED_NOT_SENT, ENDPOINT_DISABLED_NOT_SENT]);
}

const STOP_WAITING = `with ended as (
    select d.id, d.status, e.deleted_at is not null as deleted,
           (select max(a.number) from webhook_attempts a where a.delivery_id = d.id) as last,
           exists (select 1 from webhook_attempts a where a.delivery_id = d.id and a.duration_ms is null) as in_flight
      from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
     where d.id = any(?::uuid[])
     order by d.id
       for update of d),
  unsent as (
    insert into webhook_attempts (delivery_id, number, attempted_at, owner, duration_ms, error)
    select n.id, coalesce(n.last, 0) + 1, now(), 'engine:not-sent', 0, case when n.deleted then ? else ? end
      from ended n where n.status = 'pending' and not n.in_flight
    on conflict (delivery_id, number) do nothing
    returning delivery_id, number, attempted_at)
  update webhook_deliveries d
     set next_attempt_at = null, updated_at = now(),
         status = case when u.delivery_id is null then d.status else 'failed' end,
         attempt_count = greatest(d.attempt_count, coalesce(u.number, 0)),
         last_attempt_at = coalesce(u.attempted_at, d.last_attempt_at)
    from ended n left join unsent u on u.delivery_id = n.id
   where d.id = n.id`;

/** The highest attempt number a delivery has taken, 0 for none. */
export async function lastAttemptNumber(knex: Knex, deliveryId: string): Promise<number> {
  const row: { n: number | null } | undefined = await knex('webhook_attempts')
    .where({ delivery_id: deliveryId })
    .max<{ n: number | null }>('number as n')
    .first();
  return Number(row?.n ?? 0);
}

export const isSuccess = (status: number | null) => status !== null && status >= 200 && status < 300;

function deliveryStatus(ok: boolean, number: number): 'success' | 'failed' | 'exhausted' {
  if (ok) return 'success';
  return number >= AUTOMATIC_ATTEMPTS ? 'exhausted' : 'failed';
}

const UPDATE_ATTEMPTS = `update webhook_attempts a
    set duration_ms = v.duration_ms, response_status = v.response_status, response_body = v.response_body,
        error = v.error, retry_after_ms = v.retry_after_ms, request_headers = v.request_headers::json
   from jsonb_to_recordset(?::jsonb) as v(delivery_id uuid, number int, owner text, duration_ms int,
                                          response_status int, response_body text, error text, retry_after_ms bigint,
                                          request_headers text)
  where a.delivery_id = v.delivery_id and a.number = v.number and a.owner = v.owner
    and a.delivery_id = any(?::uuid[])`;

// A success is final: a late failure of a racing attempt (manual retry beside the batch) never undoes it.
// A deleted endpoint takes no more attempts: a result that lands after its deliveries were stopped
// (its POST was in flight) schedules nothing. The statement sees a delete committed before it began;
// one that began before holds the delivery's row, and the stop waits for it, then clears its schedule.
const UPDATE_DELIVERIES = `update webhook_deliveries d
    set status = case when d.status = 'success' then 'success' else v.status end,
        next_attempt_at = case when d.status = 'success'
                                 or exists (select 1 from webhook_endpoints e
                                             where e.id = d.endpoint_id and e.deleted_at is not null) then null
                               else v.next_attempt_at end,
        attempt_count = greatest(d.attempt_count, v.number),
        last_attempt_at = case when v.number >= d.attempt_count then v.attempted_at else d.last_attempt_at end,
        updated_at = now()
   from jsonb_to_recordset(?::jsonb) as v(id uuid, status text, next_attempt_at timestamptz, number int,
                                          attempted_at timestamptz)
  where d.id = v.id and d.id = any(?::uuid[])`;

/**
 * Every statement that reads or writes rows of the large tables by a set of ids names them in an
 * `= any(array)` as well: a parameter set from jsonb_to_recordset is estimated at 100 rows, and the
 * generic plan then hashed a scan of the whole table (seen: 217 blocks read to record 3 results).
 */
const LOAD_TARGETS = preparedStatement<Target>(
  'webhooks-load-targets',
  `select ${TARGET_COLUMNS}
     from webhook_deliveries d
     join webhook_endpoints e on e.id = d.endpoint_id
     join webhook_event_bodies b on b.event_id = d.event_id
     join events ev on ev.id = d.event_id
    where d.id = any(?::uuid[])`,
);

const RECORD_ATTEMPTS = preparedStatement('webhooks-record-attempts', UPDATE_ATTEMPTS);
const RECORD_DELIVERIES = preparedStatement('webhooks-record-deliveries', UPDATE_DELIVERIES);

/** Touches no flow or endpoint row that is already closed and not failing: the usual case takes no lock there. */
const RECORD_SUCCESSES = preparedStatement<{ endpoint_id: string; kind: 'closed' | 'reported' }>(
  'webhooks-record-successes',
  `with attempts as (${UPDATE_ATTEMPTS}),
        deliveries as (${UPDATE_DELIVERIES}),
        circuits as (
          update webhook_endpoint_flow
             set circuit_state = 'closed', consecutive_failures = 0, open_count = 0, opened_at = null, probe_at = null
           where endpoint_id = any(?::uuid[])
             and (circuit_state <> 'closed' or consecutive_failures <> 0 or open_count <> 0)
          returning endpoint_id, circuit_state),
        healthy as (
          update webhook_endpoints set failing_since = null, failing_attempts = 0
           where id = any(?::uuid[]) and (failing_since is not null or failing_attempts <> 0)
             and failing_reported_at is null),
        reported as (
          select id from webhook_endpoints where id = any(?::uuid[]) and failing_reported_at is not null)
   select endpoint_id, 'closed' as kind from circuits
   union all
   select id, 'reported' from reported`,
);
