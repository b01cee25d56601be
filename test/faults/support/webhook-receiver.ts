import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { http } from '../../support/http';
import { sql } from './subscription-flow';
import { until } from '../../support/wait';

/**
 * A webhook endpoint that answers 204 and records the event ids it took, registered for every
 * event type of the organisation the staff token belongs to. With `failFirst` it answers 500 to
 * the first attempt of each event, so every delivery goes into its 30 s backoff.
 */
export async function startReceiver(baseUrl: string, staffToken: string, opts: { failFirst?: boolean } = {}) {
  const received = new Map<string, number>();
  const refused = new Set<string>();
  const server: Server = createServer((req, res) => {
    const id = req.headers['x-service-event-id'];
    if (opts.failFirst && typeof id === 'string' && !refused.has(id)) {
      refused.add(id);
      return req.resume().on('end', () => res.writeHead(500).end());
    }
    if (typeof id === 'string') received.set(id, (received.get(id) ?? 0) + 1);
    req.resume().on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const res = await http(baseUrl).post('/notifications/webhook-endpoints', staffToken, { url, eventTypes: ['*'] });
  if (res.status !== 201) throw new Error(`register endpoint: ${res.status} ${JSON.stringify(res.body)}`);
  return { received, refused, close: () => new Promise<void>((r) => server.close(() => r())) };
}

export interface DeliveryVerdict {
  /** Events of the subscription the receiver never got. */
  undelivered: string[];
  /** Deliveries whose attempt numbers are not exactly 1..attempt_count. */
  attemptGaps: string[];
}

/** Every event of the subscription reached the receiver at least once, and no attempt is missing from any record. */
async function deliveryVerdict(
  databaseUrl: string,
  received: Map<string, number>,
  subscriptionId: string,
): Promise<DeliveryVerdict> {
  const events = await sql(
    databaseUrl,
    `select id, type from events where data->>'id' = $1 or data->>'subscription_id' = $1`,
    [subscriptionId],
  );
  const undelivered = events.filter((e) => !received.has(e.id as string)).map((e) => e.type as string);
  const deliveries = await sql(
    databaseUrl,
    `select d.id, d.attempt_count, coalesce(array_agg(a.number order by a.number) filter (where a.number is not null), '{}') as numbers
       from webhook_deliveries d left join webhook_attempts a on a.delivery_id = d.id
      where d.event_id = any($1::uuid[]) group by d.id, d.attempt_count`,
    [events.map((e) => e.id)],
  );
  const attemptGaps = deliveries
    .filter(
      (d) =>
        JSON.stringify(d.numbers) !==
        JSON.stringify(Array.from({ length: d.attempt_count as number }, (_, i) => i + 1)),
    )
    .map((d) => `${d.id}: attempt_count ${d.attempt_count}, attempts ${JSON.stringify(d.numbers)}`);
  return { undelivered, attemptGaps };
}

/**
 * Waits (deliveries follow commits, and back off after failures) until every event arrived and
 * every attempt's result is recorded, or time is up; then judges. A delivery's count moves when
 * its result is written, just after the POST the receiver saw: judged at that instant it shows
 * attempt 1 with a count of 0, which is in flight, not lost.
 */
export async function settledDeliveries(
  databaseUrl: string,
  received: Map<string, number>,
  subscriptionIds: string[],
  timeoutMs = 120_000,
): Promise<DeliveryVerdict[]> {
  let verdicts: DeliveryVerdict[] = [];
  const judge = async () =>
    (verdicts = await Promise.all(subscriptionIds.map((id) => deliveryVerdict(databaseUrl, received, id))));
  const clean = (vs: DeliveryVerdict[]) => vs.every((v) => v.undelivered.length === 0 && v.attemptGaps.length === 0);
  // Out of time is a verdict too: the caller's expectation shows what is missing.
  await until('every event delivered and every attempt recorded', judge, clean, { timeoutMs, intervalMs: 1000 }).catch(
    () => undefined,
  );
  return verdicts;
}
