import type { Orm } from '../../db/orm';
import type { EndpointOrdering, WebhookEndpointRow } from '../../db/entities/webhook-rows';
import { newId } from '../../lib/ids';
import { notFound } from '../../lib/errors';
import { newSigningSecret, type SecretBox } from '../../activities/webhook-secret-box';
import { applyCursor, byCreation, page } from '../cursor';

/** Webhook endpoints of an organisation; every read and write is scoped by the caller's org. */
export function endpointStore(orm: Orm, secrets: SecretBox, opts: { overlapSeconds?: number } = {}) {
  const overlapMs = (opts.overlapSeconds ?? 86_400) * 1000;
  const knex = () => orm.em.getConnection().getKnex();
  const live = (orgId: string) =>
    knex()<WebhookEndpointRow>('webhook_endpoints').where({ org_id: orgId }).whereNull('deleted_at');

  async function get(orgId: string, id: string): Promise<WebhookEndpointRow> {
    const row = await live(orgId).where({ id }).first();
    if (!row) throw notFound('Webhook endpoint');
    return row;
  }

  async function update(orgId: string, id: string, patch: Partial<WebhookEndpointRow>): Promise<WebhookEndpointRow> {
    const [row] = await live(orgId)
      .where({ id })
      .update({ ...patch, updated_at: new Date() })
      .returning('*');
    if (!row) throw notFound('Webhook endpoint');
    return row as WebhookEndpointRow;
  }

  return {
    get,

    /** The secret is returned to the caller once and stored sealed (spec §2.6, §8). */
    async create(
      orgId: string,
      input: { url: string; description: string; eventTypes: string[]; ordering?: EndpointOrdering },
    ) {
      const id = newId();
      const secret = newSigningSecret();
      const [row] = await knex()('webhook_endpoints')
        .insert({
          id,
          org_id: orgId,
          url: input.url,
          description: input.description,
          event_types: input.eventTypes,
          ordering: input.ordering ?? 'none',
          secret_ciphertext: secrets.seal(id, secret),
        })
        .returning('*');
      return { row: row as WebhookEndpointRow, secret };
    },

    async list(orgId: string, q: { limit: number; cursor?: string }) {
      const query = live(orgId)
        .select('*')
        .limit(q.limit + 1);
      applyCursor(query, 'webhook_endpoints', q.cursor);
      return page((await query) as (WebhookEndpointRow & { cursor_at: string })[], q.limit, byCreation);
    },

    update: (orgId: string, id: string, patch: { url?: string; description?: string; ordering?: EndpointOrdering }) =>
      update(orgId, id, patch),

    setEventTypes: (orgId: string, id: string, eventTypes: string[]) => update(orgId, id, { event_types: eventTypes }),

    /**
     * The next attempt of every pending delivery is signed with the new secret (spec §4.3); the
     * replaced one keeps signing beside it in webhook-signature for the overlap. A second rotation
     * within the overlap drops the oldest: only the secret just replaced stays valid.
     */
    async rotate(orgId: string, id: string) {
      const secret = newSigningSecret();
      // SET reads the row as it was, so the secret moved aside is the one this statement replaced.
      const row = await update(orgId, id, {
        secret_ciphertext: secrets.seal(id, secret),
        previous_secret_ciphertext: overlapMs > 0 ? knex().raw('secret_ciphertext') : null,
        previous_secret_expires_at: overlapMs > 0 ? new Date(Date.now() + overlapMs) : null,
      } as Partial<WebhookEndpointRow>);
      return { row, secret };
    },

    /** Re-enables a disabled endpoint; it starts again with a clean failure record. */
    enable: (orgId: string, id: string) =>
      update(orgId, id, { status: 'enabled', disabled_reason: null, disabled_at: null, failing_since: null }),

    /**
     * Soft delete: delivery history stays readable. Returns the deliveries that may still have
     * attempts scheduled, so the caller can stop them at once (attempts also check the endpoint).
     */
    async remove(orgId: string, id: string): Promise<string[]> {
      return knex().transaction(async (trx) => {
        const n = await trx('webhook_endpoints')
          .where({ org_id: orgId, id })
          .whereNull('deleted_at')
          .update({ deleted_at: trx.fn.now(), updated_at: trx.fn.now() });
        if (n === 0) throw notFound('Webhook endpoint');
        await trx('webhook_deliveries')
          .where({ endpoint_id: id })
          .whereIn('status', ['pending', 'failed'])
          .update({ next_attempt_at: null });
        return trx('webhook_deliveries')
          .where({ endpoint_id: id })
          .whereIn('status', ['pending', 'failed'])
          .pluck('id');
      });
    },
  };
}

export type EndpointStore = ReturnType<typeof endpointStore>;
