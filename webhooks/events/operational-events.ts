import type { Knex } from '@mikro-orm/postgresql';
import type { BehaviourSet } from '../../lib/behaviour-set';
import {
  DELIVERY_EXHAUSTED,
  ENDPOINT_FAILING,
  ENDPOINT_RECOVERED,
  EVENT_SOURCES,
  type ServiceEvent,
} from '../../domain/events';
import { uuidFromName } from '../../lib/ids';
import { publishEvents } from './publish';

/**
 * The operational events of docs/decisions/0415-operational-events.md, each published inside the
 * transaction that changes the state it reports, with an id derived from what it reports: a retried
 * commit stores it once. Each goes only to the organisation's endpoints that name its type, never to
 * the endpoint it is about (webhooks/events/publish.ts, PLAN).
 */

/** An endpoint whose failing spell the caller's statement just marked reported. */
export interface FailingReport {
  endpointId: string;
  orgId: string;
  failingSince: Date;
  failedAttempts: number;
  reportedAt: Date;
  lastResponseStatus: number | null;
}

export async function publishFailing(
  trx: Knex.Transaction,
  set: BehaviourSet,
  reports: readonly FailingReport[],
): Promise<void> {
  const events = reports.map<ServiceEvent>((r) => ({
    id: uuidFromName(ENDPOINT_FAILING, r.endpointId, r.failingSince.toISOString()),
    type: ENDPOINT_FAILING,
    source: EVENT_SOURCES.notifications,
    orgId: r.orgId,
    occurredAt: r.reportedAt.toISOString(),
    data: {
      endpoint_id: r.endpointId,
      failing_since: r.failingSince.toISOString(),
      failed_attempts: r.failedAttempts,
      last_response_status: r.lastResponseStatus,
    },
  }));
  await publishEvents(trx, events, { set });
}

/**
 * Ends the failing spell of these endpoints, each at the time of its success, and publishes
 * `webhook.endpoint.recovered` for those whose spell was reported. The statement locks and
 * clears the rows, so of two callers only one finds a reported spell to announce.
 */
export async function endFailingSpells(
  trx: Knex.Transaction,
  set: BehaviourSet,
  succeededAt: ReadonlyMap<string, Date>,
): Promise<void> {
  if (succeededAt.size === 0) return;
  const rows: { id: string; org_id: string; failing_since: Date | null; failing_reported_at: Date | null }[] = (
    await trx.raw(
      `update webhook_endpoints e
          set failing_since = null, failing_attempts = 0, failing_reported_at = null
         from (select id, failing_since, failing_reported_at from webhook_endpoints
                where id = any(?::uuid[])
                  and (failing_since is not null or failing_attempts <> 0 or failing_reported_at is not null)
                order by id for update) o
        where e.id = o.id
        returning e.id, e.org_id, o.failing_since, o.failing_reported_at`,
      [[...succeededAt.keys()].sort()],
    )
  ).rows;
  const events = rows
    .filter((r) => r.failing_reported_at !== null)
    .map<ServiceEvent>((r) => {
      const reportedAt = new Date(r.failing_reported_at!);
      const at = succeededAt.get(r.id)!;
      return {
        id: uuidFromName(ENDPOINT_RECOVERED, r.id, reportedAt.toISOString()),
        type: ENDPOINT_RECOVERED,
        source: EVENT_SOURCES.notifications,
        orgId: r.org_id,
        occurredAt: at.toISOString(),
        data: {
          endpoint_id: r.id,
          failing_since: r.failing_since ? new Date(r.failing_since).toISOString() : reportedAt.toISOString(),
          recovered_at: at.toISOString(),
        },
      };
    });
  await publishEvents(trx, events, { set });
}

/**
 * `webhook.delivery.exhausted` for those of these deliveries that are now `exhausted`, once per
 * delivery (its id names the event). A delivery of an operational event is not reported: two
 * failing endpoints that name the type would otherwise tell each other of each other's exhaustion
 * without end.
 */
export async function publishExhausted(
  trx: Knex.Transaction,
  set: BehaviourSet,
  deliveryIds: readonly string[],
): Promise<void> {
  if (deliveryIds.length === 0) return;
  const rows: {
    id: string;
    event_id: string;
    event_type: string;
    endpoint_id: string;
    org_id: string;
    attempt_count: number;
    last_attempt_at: Date | null;
    last_response_status: number | null;
  }[] = (
    await trx.raw(
      `select d.id, d.event_id, d.event_type, d.endpoint_id, d.org_id, d.attempt_count, d.last_attempt_at,
              (select a.response_status from webhook_attempts a where a.delivery_id = d.id
                order by a.number desc limit 1) as last_response_status
         from webhook_deliveries d
        where d.id = any(?::uuid[]) and d.status = 'exhausted' and d.event_type not like 'webhook.%'`,
      [[...deliveryIds].sort()],
    )
  ).rows;
  const events = rows.map<ServiceEvent>((r) => {
    const at = r.last_attempt_at ? new Date(r.last_attempt_at) : new Date();
    return {
      id: uuidFromName(DELIVERY_EXHAUSTED, r.id),
      type: DELIVERY_EXHAUSTED,
      source: EVENT_SOURCES.notifications,
      orgId: r.org_id,
      occurredAt: at.toISOString(),
      data: {
        delivery_id: r.id,
        endpoint_id: r.endpoint_id,
        event_id: r.event_id,
        event_type: r.event_type,
        attempts: r.attempt_count,
        last_attempt_at: at.toISOString(),
        last_response_status: r.last_response_status,
      },
    };
  });
  await publishEvents(trx, events, { set });
}
