import type { Knex } from '@mikro-orm/postgresql';
import type { Orm } from '../db/orm';
import { appendEvents } from '../db/outbox';
import { disableReason, failingSince, type DisableReason } from '../domain/endpoint-health';
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
export async function disableEndpoint(deps: HealthDeps, endpointId: string, reason: DisableReason, at: Date = new Date()): Promise<boolean> {
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

/**
 * What the delivery engine calls after each attempt: keeps the endpoint's "failing since" and
 * disables it on a 410 Gone or after `failingPeriodMs` of nothing but failures. Answers the reason
 * when this call disabled it.
 */
export async function noteAttemptOutcome(
  deps: HealthDeps & { failingPeriodMs: number },
  endpointId: string,
  outcome: { status: number | null; at: Date },
): Promise<DisableReason | null> {
  const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
  const knex = deps.orm.em.getConnection().getKnex();
  const since = await updateFailingSince(knex, endpointId, ok, outcome.at);
  const reason = ok ? null : disableReason(outcome.status, since, outcome.at, deps.failingPeriodMs);
  if (!reason) return null;
  return (await disableEndpoint(deps, endpointId, reason, outcome.at)) ? reason : null;
}

async function updateFailingSince(knex: Knex, endpointId: string, ok: boolean, at: Date): Promise<Date | null> {
  return knex.transaction(async (trx) => {
    const row: { failing_since: Date | null } | undefined = await trx('webhook_endpoints').where({ id: endpointId }).forUpdate().first('failing_since');
    if (!row) return null;
    const next = failingSince(row.failing_since ? new Date(row.failing_since) : null, ok, at);
    await trx('webhook_endpoints').where({ id: endpointId }).update({ failing_since: next });
    return next;
  });
}
