import type { Orm } from '../../db/orm';
import type { DeliveryStatus, WebhookAttemptRow, WebhookDeliveryRow } from '../../db/entities/webhook-rows';
import { newestFirst } from '../../db/keyset';
import { notFound } from '../../lib/errors';
import { lastAttemptNumber } from './attempt-store';
import { bodyAtVersion } from '../../domain/payload-versions';

/** Which deliveries a list shows (spec §4.3's filters), `limit + 1` of them newest first after `after`. */
export interface DeliveryFilter {
  limit: number;
  after?: { at: string; id: string } | undefined;
  endpoint_id?: string | undefined;
  status?: string | undefined;
  event_type?: string | undefined;
  event_id?: string | undefined;
  /** ISO 8601: created at or after. */
  created_after?: string | undefined;
  /** ISO 8601: created before. */
  created_before?: string | undefined;
}

/** Delivery history of an organisation (spec §2.7, §4.3), newest first. */
export function deliveryReads(orm: Orm) {
  const knex = () => orm.em.getConnection().getKnex();
  return {
    /** Each row with its `cursor_at`; the API pages them. */
    async list(orgId: string, q: DeliveryFilter) {
      const query = knex()<WebhookDeliveryRow>('webhook_deliveries')
        .where({ org_id: orgId })
        .select('*')
        .limit(q.limit + 1);
      if (q.endpoint_id) query.where({ endpoint_id: q.endpoint_id });
      if (q.status) query.where({ status: q.status as DeliveryStatus });
      if (q.event_type) query.where({ event_type: q.event_type });
      if (q.event_id) query.where({ event_id: q.event_id });
      if (q.created_after) query.where('created_at', '>=', new Date(q.created_after));
      if (q.created_before) query.where('created_at', '<', new Date(q.created_before));
      newestFirst(query, 'webhook_deliveries', q.after);
      return (await query) as (WebhookDeliveryRow & { cursor_at: string })[];
    },

    async get(orgId: string, id: string): Promise<WebhookDeliveryRow> {
      const row = await knex()<WebhookDeliveryRow>('webhook_deliveries').where({ org_id: orgId, id }).first();
      if (!row) throw notFound('Webhook delivery');
      return row as WebhookDeliveryRow;
    },

    async attempts(deliveryId: string): Promise<WebhookAttemptRow[]> {
      return knex()<WebhookAttemptRow>('webhook_attempts').where({ delivery_id: deliveryId }).orderBy('number');
    },

    /**
     * The §6.3 body as the delivery's attempts send it: the stored body in the delivery's payload version
     * (docs/decisions/0420-versioned-payloads.md), the same bytes on every attempt.
     */
    async signedBody(d: Pick<WebhookDeliveryRow, 'event_id' | 'payload_version'>): Promise<string | null> {
      const row: { body: string } | undefined = await knex()('webhook_event_bodies')
        .where({ event_id: d.event_id })
        .first('body');
      return row ? bodyAtVersion(row.body, d.payload_version) : null;
    },

    async lastAttemptNumber(deliveryId: string): Promise<number> {
      return lastAttemptNumber(knex(), deliveryId);
    },

    async endpointState(endpointId: string): Promise<'enabled' | 'disabled' | 'deleted'> {
      const row: { deleted_at: Date | null; status: 'enabled' | 'disabled' } | undefined = await knex()(
        'webhook_endpoints',
      )
        .where({ id: endpointId })
        .first('deleted_at', 'status');
      return !row || row.deleted_at !== null ? 'deleted' : row.status;
    },

    /** The deliveries of these events in the organisation, oldest first, each with its endpoint's URL. */
    async ofEvents(orgId: string, eventIds: string[]): Promise<(WebhookDeliveryRow & { endpoint_url: string })[]> {
      return knex()('webhook_deliveries as d')
        .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .where('d.org_id', orgId)
        .whereIn('d.event_id', eventIds)
        .orderBy([{ column: 'd.created_at' }, { column: 'd.id' }])
        .select('d.*', 'e.url as endpoint_url');
    },

    /**
     * Seconds the oldest delivery never yet attempted (`pending`) has waited for the engine, every
     * organisation's; 0 when none. Left out: deliveries that wait for their receiver, not the engine
     * (an ordered endpoint's, behind an earlier one of the same subscription; an endpoint whose circuit
     * is open or probing). The metric of the backlog's age (lib/runtime/metrics.ts).
     */
    async oldestPendingAgeSeconds(): Promise<number> {
      const { rows } = (await knex().raw(
        `select extract(epoch from (now() - min(d.created_at)))::float8 as age
           from webhook_deliveries d
           join webhook_endpoints e on e.id = d.endpoint_id
           left join webhook_endpoint_flow f on f.endpoint_id = d.endpoint_id
          where d.status = 'pending' and e.ordering = 'none' and coalesce(f.circuit_state, 'closed') = 'closed'`,
      )) as { rows: { age: number | null }[] };
      return Math.max(0, rows[0]?.age ?? 0);
    },
  };
}
