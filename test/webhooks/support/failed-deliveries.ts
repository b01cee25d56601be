import { randomUUID } from 'node:crypto';
import type { Knex } from '@mikro-orm/postgresql';
import { renderEventBody } from '../../../webhooks/secrets/signing';
import { deliveryIdFor } from './delivery-id';

/**
 * Deliveries as a long outage leaves them: `exhausted` after 8 attempts (or `failed` with the
 * schedule still running), written as rows because producing them for real takes 40 hours of
 * timers. Everything a retry reads is there: the event, its stored body, the delivery, its attempts.
 */
export async function failedDeliveries(
  knex: Knex,
  target: { orgId: string; endpointId: string },
  specs: { createdAt: Date; status: 'failed' | 'exhausted' | 'success' }[],
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < specs.length; i += 500) {
    const chunk = specs.slice(i, i + 500).map((s) => {
      const event = {
        id: randomUUID(),
        type: 'subscription.approved',
        source: 'service.issuance',
        org_id: target.orgId,
        occurred_at: s.createdAt,
        data: { n: i },
      };
      const attempts = s.status === 'exhausted' ? 8 : 1;
      return { s, event, deliveryId: deliveryIdFor(event.id, target.endpointId), attempts };
    });
    await knex.transaction(async (trx) => {
      await trx('events').insert(
        chunk.map((c) => ({ ...c.event, data: JSON.stringify(c.event.data), dispatched_at: c.s.createdAt })),
      );
      await trx('webhook_event_bodies').insert(
        chunk.map((c) => ({ event_id: c.event.id, body: renderEventBody(c.event) })),
      );
      await trx('webhook_deliveries').insert(
        chunk.map((c) => ({
          id: c.deliveryId,
          event_id: c.event.id,
          endpoint_id: target.endpointId,
          org_id: target.orgId,
          event_type: c.event.type,
          status: c.s.status,
          attempt_count: c.attempts,
          last_attempt_at: c.s.createdAt,
          created_at: c.s.createdAt,
          updated_at: c.s.createdAt,
        })),
      );
      await trx('webhook_attempts').insert(
        chunk.flatMap((c) =>
          Array.from({ length: c.attempts }, (_, n) => ({
            delivery_id: c.deliveryId,
            number: n + 1,
            attempted_at: c.s.createdAt,
            duration_ms: 5,
            response_status: c.s.status === 'success' ? 200 : 503,
          })),
        ),
      );
    });
    ids.push(...chunk.map((c) => c.deliveryId));
  }
  return ids;
}
