import type { Orm } from '../db/orm';
import { appendEvents } from '../db/outbox';
import { disableReason, type DisableReason } from '../domain/endpoint-health';
import { ENDPOINT_DISABLED, EVENT_SOURCES, type ServiceEvent } from '../domain/events';
import { newId } from '../lib/ids';
import { relayOnlyDispatcher, type EventDispatcher } from './event-dispatcher';

interface HealthDeps {
  orm: Orm;
  /** Fast path to the fan-out; without one the outbox relay delivers the event a few seconds later. */
  dispatcher?: EventDispatcher;
}

/**
 * Disables an enabled endpoint and, in the same transaction, publishes `webhook.endpoint.disabled`
 * to the organisation. The fan-out skips disabled endpoints, so the event reaches the others only.
 * Answers false, publishing nothing, when the endpoint was already disabled or is deleted: a
 * second caller (another attempt's 410, a retried activity) changes nothing.
 */
export async function disableEndpoint(
  deps: HealthDeps,
  endpointId: string,
  reason: DisableReason,
  at: Date = new Date(),
): Promise<boolean> {
  const knex = deps.orm.em.getConnection().getKnex();
  const fresh = await knex.transaction(async (trx) => {
    const [row]: { id: string; org_id: string; url: string; description: string }[] = await trx('webhook_endpoints')
      .where({ id: endpointId, status: 'enabled' })
      .whereNull('deleted_at')
      .update({ status: 'disabled', disabled_reason: reason, disabled_at: at, updated_at: trx.fn.now() })
      .returning(['id', 'org_id', 'url', 'description']);
    if (!row) return [];
    const event: ServiceEvent = {
      id: newId(),
      type: ENDPOINT_DISABLED,
      source: EVENT_SOURCES.notifications,
      orgId: row.org_id,
      occurredAt: at.toISOString(),
      data: { endpoint_id: row.id, url: row.url, description: row.description, reason, disabled_at: at.toISOString() },
    };
    return appendEvents(trx, [event]);
  });
  if (fresh.length) await (deps.dispatcher ?? relayOnlyDispatcher).dispatch(fresh);
  return fresh.length > 0;
}

/** One answer (or failure to answer) of an endpoint, at the delivery schedule's time. */
export interface ObservedAttempt {
  endpointId: string;
  status: number | null;
  at: Date;
}

/**
 * What the delivery engine calls after each batch of attempts (issue 12): keeps each endpoint's
 * "failing since" and disables it on a 410 Gone or after `failingPeriodMs` of nothing but
 * failures. Answers the endpoints that are disabled by these answers (by this call or an earlier
 * one), with the reason. Cheap on the hot path: successes write only rows that were failing, and
 * failures of a batch cost one statement whatever the number of endpoints.
 */
export async function noteAttemptOutcomes(
  deps: HealthDeps & { failingPeriodMs: number },
  observed: readonly ObservedAttempt[],
): Promise<Map<string, DisableReason>> {
  const knex = deps.orm.em.getConnection().getKnex();
  const succeeded = new Set(observed.filter((o) => isOk(o.status)).map((o) => o.endpointId));
  // An endpoint with a success in the batch is not "failing every attempt", whatever else it answered.
  const failures = observed.filter((o) => !isOk(o.status) && !succeeded.has(o.endpointId));
  if (succeeded.size)
    await knex('webhook_endpoints')
      .whereIn('id', [...succeeded])
      .whereNotNull('failing_since')
      .update({ failing_since: null });
  const disabled = new Map<string, DisableReason>();
  if (!failures.length) return disabled;

  const firstFailure = new Map<string, Date>();
  for (const f of failures)
    if (!firstFailure.has(f.endpointId) || f.at < firstFailure.get(f.endpointId)!) firstFailure.set(f.endpointId, f.at);
  // Sets "failing since" where it was unset, and reads it back, in one statement (the outer select
  // sees the rows as they were, hence the coalesce with what the update returned).
  const rows: { id: string; failing_since: Date | null }[] = (
    await knex.raw(
      `with v as (select * from jsonb_to_recordset(?::jsonb) as v(id uuid, at timestamptz)),
            upd as (update webhook_endpoints e set failing_since = v.at from v where e.id = v.id and e.failing_since is null returning e.id, e.failing_since)
       select e.id, coalesce(upd.failing_since, e.failing_since) as failing_since
         from v join webhook_endpoints e on e.id = v.id left join upd on upd.id = e.id`,
      [JSON.stringify([...firstFailure].map(([id, at]) => ({ id, at: at.toISOString() })))],
    )
  ).rows;
  const since = new Map(rows.map((r) => [r.id, r.failing_since ? new Date(r.failing_since) : null]));
  for (const f of failures) {
    if (disabled.has(f.endpointId) || !since.has(f.endpointId)) continue;
    const reason = disableReason(f.status, since.get(f.endpointId) ?? null, f.at, deps.failingPeriodMs);
    if (reason) disabled.set(f.endpointId, reason);
  }
  for (const [endpointId, reason] of disabled)
    await disableEndpoint(deps, endpointId, reason, failures.find((f) => f.endpointId === endpointId)!.at);
  return disabled;
}

/** One attempt's outcome (noteAttemptOutcomes for one); answers the reason when this call disabled the endpoint. */
export async function noteAttemptOutcome(
  deps: HealthDeps & { failingPeriodMs: number },
  endpointId: string,
  outcome: { status: number | null; at: Date },
): Promise<DisableReason | null> {
  const before = await deps.orm.em
    .getConnection()
    .getKnex()('webhook_endpoints')
    .where({ id: endpointId })
    .first('status');
  const reason = (await noteAttemptOutcomes(deps, [{ endpointId, ...outcome }])).get(endpointId) ?? null;
  return before?.status === 'enabled' ? reason : null;
}

const isOk = (status: number | null) => status !== null && status >= 200 && status < 300;
