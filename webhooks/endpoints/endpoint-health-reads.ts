import type { Orm } from '../../db/orm';
import type { WebhookDeliveryRow } from '../../db/entities/webhook-rows';

/** How far back an endpoint's success rate looks. */
export const SUCCESS_WINDOW_HOURS = 24;

export interface SuccessRate {
  window_hours: number;
  attempts: number;
  succeeded: number;
  /** succeeded / attempts, 0..1 with 4 decimals; null when nothing was attempted in the window. */
  rate: number | null;
}

/**
 * Each endpoint's attempts of the last 24 hours, and how many got a 2xx. Read live from the
 * attempt records (through deliveries attempted in the window, indexed), never kept as a counter
 * a crashed attempt could skew.
 */
export async function successRates(orm: Orm, endpointIds: string[]): Promise<Map<string, SuccessRate>> {
  const rates = new Map<string, SuccessRate>(
    endpointIds.map((id) => [id, { window_hours: SUCCESS_WINDOW_HOURS, attempts: 0, succeeded: 0, rate: null }]),
  );
  if (!endpointIds.length) return rates;
  const rows: { endpoint_id: string; attempts: string; succeeded: string }[] = await orm.em
    .getConnection()
    .getKnex()('webhook_deliveries as d')
    .join('webhook_attempts as a', 'a.delivery_id', 'd.id')
    .whereIn('d.endpoint_id', endpointIds)
    .whereRaw(`d.last_attempt_at > now() - make_interval(hours => ?)`, [SUCCESS_WINDOW_HOURS])
    .whereRaw(`a.attempted_at > now() - make_interval(hours => ?)`, [SUCCESS_WINDOW_HOURS])
    .groupBy('d.endpoint_id')
    .select(
      'd.endpoint_id',
      orm.em.getConnection().getKnex().raw('count(*) as attempts'),
      orm.em
        .getConnection()
        .getKnex()
        .raw('count(*) filter (where a.response_status between 200 and 299) as succeeded'),
    );
  for (const r of rows) {
    const attempts = Number(r.attempts);
    const succeeded = Number(r.succeeded);
    rates.set(r.endpoint_id, {
      window_hours: SUCCESS_WINDOW_HOURS,
      attempts,
      succeeded,
      rate: attempts ? Math.round((succeeded / attempts) * 10_000) / 10_000 : null,
    });
  }
  return rates;
}

/** The latest failed attempts an endpoint's health shows, and the most of its waiting deliveries. */
const RECENT_FAILURES = 20;
const WAITING = 50;

/** One time bucket of an endpoint's attempts: its number (epoch seconds / width) and its counts, as PostgreSQL answers them. */
export interface AttemptBucket {
  bucket: string;
  attempts: string;
  succeeded: string;
}

/** A failed attempt (no 2xx), with its delivery's event type and status. */
export interface FailedAttempt {
  delivery_id: string;
  event_type: string;
  status: WebhookDeliveryRow['status'];
  number: number;
  attempted_at: Date;
  response_status: number | null;
  error: string | null;
}

/**
 * An endpoint's delivery health for the operator console: its attempts since `since` in buckets of
 * `seconds` with their 2xx answers, its latest failed attempts, and its deliveries waiting on a
 * scheduled retry. Null when the organisation has no such endpoint (or it was deleted).
 */
export async function endpointHealth(
  orm: Orm,
  orgId: string,
  endpointId: string,
  window: { since: Date; seconds: number },
): Promise<{ buckets: AttemptBucket[]; failures: FailedAttempt[]; waiting: WebhookDeliveryRow[] } | null> {
  const knex = () => orm.em.getConnection().getKnex();
  const endpoint = await knex()('webhook_endpoints')
    .where({ id: endpointId, org_id: orgId, deleted_at: null })
    .first('id');
  if (!endpoint) return null;
  const { since, seconds } = window;

  const buckets = (await knex()('webhook_attempts as a')
    .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .where({ 'd.org_id': orgId, 'd.endpoint_id': endpointId })
    .where('a.attempted_at', '>=', since)
    .select(knex().raw('floor(extract(epoch from a.attempted_at) / ?)::bigint as bucket', [seconds]))
    .count({ attempts: '*' })
    .select(knex().raw('count(*) filter (where a.response_status between 200 and 299) as succeeded'))
    .groupBy('bucket')
    .orderBy('bucket')) as AttemptBucket[];

  const failures = (await knex()('webhook_attempts as a')
    .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .where({ 'd.org_id': orgId, 'd.endpoint_id': endpointId })
    .whereRaw('(a.response_status is null or a.response_status not between 200 and 299)')
    .orderBy([
      { column: 'a.attempted_at', order: 'desc' },
      { column: 'a.number', order: 'desc' },
    ])
    .limit(RECENT_FAILURES)
    .select(
      'a.delivery_id',
      'd.event_type',
      'd.status',
      'a.number',
      'a.attempted_at',
      'a.response_status',
      'a.error',
    )) as FailedAttempt[];

  const waiting = (await knex()('webhook_deliveries')
    .where({ org_id: orgId, endpoint_id: endpointId, status: 'failed' })
    .whereNotNull('next_attempt_at')
    .orderBy('next_attempt_at')
    .limit(WAITING)
    .select('*')) as WebhookDeliveryRow[];

  return { buckets, failures, waiting };
}
