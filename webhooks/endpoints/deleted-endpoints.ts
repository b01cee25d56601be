import type { Client } from '@temporalio/client';
import type { Knex } from '@mikro-orm/postgresql';
import { endpointDeleted } from '../../domain/webhook-messages';
import { logger } from '../../lib/runtime/logger';
import { stopWaiting } from '../deliveries/attempt-store';
import { signalDelivery } from '../deliveries/delivery-signal';
import { endLeases, LEASE_MS, unleased } from '../deliveries/leases';

/** Deliveries stopped per call, and signals sent side by side. */
const PAGE = 200;
const SIDE_BY_SIDE = 20;

/**
 * A deleted endpoint's waiting deliveries, stopped in the background (docs/decisions/0290-nothing-left-pending.md):
 * the DELETE request only marks the endpoint and writes its row in `webhook_endpoint_cleanups`;
 * each sweep leases one such endpoint (webhooks/deliveries/leases.ts, so workers take different ones and no
 * transaction stays open while the signals go), signals a page of its deliveries' workflows to end
 * now, then stops waiting for them (`stopWaiting`: a never attempted one ends `failed`,
 * ENDPOINT_DELETED) and removes the row once no page is left. A missed signal costs nothing: an
 * attempt checks the endpoint first and sends nothing. Answers how many deliveries it stopped.
 */
export async function stopDeletedEndpoints(deps: { knex: () => Knex; temporal: Client }): Promise<number> {
  const knex = deps.knex();
  const [job]: { endpoint_id: string }[] = (
    await knex.raw(
      `update webhook_endpoint_cleanups c set leased_until = now() + (? * interval '1 millisecond')
        where c.endpoint_id = (select o.endpoint_id from webhook_endpoint_cleanups o where ${unleased('o')}
                                order by o.created_at limit 1 for update skip locked)
        returning c.endpoint_id`,
      [LEASE_MS],
    )
  ).rows;
  if (!job) return 0;
  try {
    const ids: string[] = await knex('webhook_deliveries')
      .where({ endpoint_id: job.endpoint_id })
      .whereIn('status', ['pending', 'failed'])
      .whereNotNull('next_attempt_at')
      .orderBy('id')
      .limit(PAGE)
      .pluck('id');
    // Never attempted and in no queue (an ordered workflow holds it): it ends failed, ENDPOINT_DELETED.
    const pending: string[] = await knex('webhook_deliveries')
      .where({ endpoint_id: job.endpoint_id, status: 'pending' })
      .whereNotExists(knex('webhook_queue').whereRaw('webhook_queue.delivery_id = webhook_deliveries.id'))
      .whereNotExists(
        knex('webhook_attempts').whereRaw(
          'webhook_attempts.delivery_id = webhook_deliveries.id and duration_ms is null',
        ),
      )
      .orderBy('id')
      .limit(PAGE)
      .pluck('id');
    for (let i = 0; i < ids.length; i += SIDE_BY_SIDE)
      await Promise.all(ids.slice(i, i + SIDE_BY_SIDE).map((id) => signalDelivery(deps.temporal, id, endpointDeleted)));
    // The endpoint's row goes once no page is left; otherwise the next sweep takes the next page.
    const finished = ids.length < PAGE && pending.length < PAGE;
    // A delivery may be in both lists (waiting on its schedule, never attempted): it counts once.
    const stopped = [...new Set([...ids, ...pending])];
    await knex.transaction(async (trx) => {
      await stopWaiting(trx, stopped);
      await endLeases(
        trx,
        'webhook_endpoint_cleanups',
        finished ? [job.endpoint_id] : [],
        finished ? [] : [job.endpoint_id],
      );
    });
    if (stopped.length)
      logger.info({ endpointId: job.endpoint_id, count: stopped.length }, 'deleted endpoint: deliveries stopped');
    return stopped.length;
  } catch (err) {
    await endLeases(knex, 'webhook_endpoint_cleanups', [], [job.endpoint_id]);
    throw err;
  }
}
