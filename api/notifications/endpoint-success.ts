import type { Orm } from '../../db/orm';

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
