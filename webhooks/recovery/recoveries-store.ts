import type { Knex } from '@mikro-orm/postgresql';
import type { Orm } from '../../db/orm';
import type { WebhookRecoveryRow } from '../../db/entities/webhook-rows';
import { newestFirst } from '../../db/keyset';
import { conflict, notFound } from '../../lib/errors';

/**
 * The rows of bulk recoveries (webhook_recoveries) as the API starts, lists, watches and stops them;
 * the work itself is webhooks/recovery/recovery.ts. A write takes the transaction its audit entry is written in.
 */
export function recoveriesStore(orm: Orm) {
  const knex = () => orm.em.getConnection().getKnex();
  return {
    async get(orgId: string, endpointId: string, id: string): Promise<WebhookRecoveryRow> {
      const row: WebhookRecoveryRow | undefined = await knex()('webhook_recoveries')
        .where({ org_id: orgId, endpoint_id: endpointId, id })
        .first();
      if (!row) throw notFound('Recovery');
      return row;
    },

    /** The endpoint's running recovery, if any (one at most: a unique index). */
    running(endpointId: string): Promise<WebhookRecoveryRow | undefined> {
      return knex()('webhook_recoveries').where({ endpoint_id: endpointId, status: 'running' }).first();
    },

    /** The endpoint's failed and exhausted deliveries created from `since` to `until`: what a recovery would retry. */
    async recoverableCount(endpointId: string, since: Date, until: Date): Promise<number> {
      const [counted] = await knex()('webhook_deliveries')
        .where({ endpoint_id: endpointId })
        .whereIn('status', ['failed', 'exhausted'])
        .whereBetween('created_at', [since, until])
        .count<{ total: string }[]>({ total: '*' });
      return Number(counted?.total ?? 0);
    },

    /** A running recovery's row, in `trx`; a second one of the endpoint is 409 RECOVERY_RUNNING. */
    async insert(
      trx: Knex.Transaction,
      row: Pick<WebhookRecoveryRow, 'id' | 'org_id' | 'endpoint_id' | 'since' | 'until' | 'total' | 'mode'>,
    ): Promise<WebhookRecoveryRow> {
      const [inserted] = (await trx('webhook_recoveries')
        .insert(row)
        .returning('*')
        .catch((err: { code?: string }) => {
          // Two POSTs at once: the one-running-per-endpoint index lets one through.
          if (err.code === '23505')
            throw conflict('RECOVERY_RUNNING', 'A recovery of this endpoint is already running');
          throw err;
        })) as WebhookRecoveryRow[];
      return inserted!;
    },

    /** Newest first: `limit + 1` of the endpoint's recoveries after `after`, each with its `cursor_at` (the API pages them). */
    async list(
      orgId: string,
      endpointId: string,
      q: { limit: number; after?: { at: string; id: string } | undefined },
    ) {
      const query = knex()('webhook_recoveries')
        .where({ org_id: orgId, endpoint_id: endpointId })
        .select('*')
        .limit(q.limit + 1);
      newestFirst(query, 'webhook_recoveries', q.after);
      return (await query) as (WebhookRecoveryRow & { cursor_at: string })[];
    },

    /** Flags the recovery to stop after the chunk in flight (its activity reads the flag), in `trx`. */
    async requestCancel(trx: Knex.Transaction, id: string): Promise<WebhookRecoveryRow> {
      const [changed] = (await trx('webhook_recoveries')
        .where({ id })
        .update({
          cancel_requested_at: trx.raw('coalesce(cancel_requested_at, now())'),
          updated_at: trx.fn.now(),
        })
        .returning('*')) as WebhookRecoveryRow[];
      return changed!;
    },
  };
}
