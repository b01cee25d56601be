import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Knex } from '@mikro-orm/postgresql';
import { deliveryWorkflowId, endpointDeleted } from '../domain/webhook-messages';
import { logger } from '../lib/runtime/logger';
import { stopWaiting } from './attempt-store';

/** Deliveries stopped per call, and signals sent side by side. */
const PAGE = 200;
const SIDE_BY_SIDE = 20;

/**
 * A deleted endpoint's waiting deliveries, stopped in the background (docs/decisions/0290-nothing-left-pending.md):
 * the DELETE request only marks the endpoint and writes its row in `webhook_endpoint_cleanups`;
 * each sweep takes one such endpoint (SKIP LOCKED, so workers take different ones), signals a page
 * of its deliveries' workflows to end now and stops waiting for them (`stopWaiting`: a never
 * attempted one ends `failed`, ENDPOINT_DELETED), and removes the row once no page is left. A
 * missed signal costs nothing: an attempt checks the endpoint first and sends nothing.
 * Answers how many deliveries it stopped.
 */
export async function stopDeletedEndpoints(deps: { knex: () => Knex; temporal: Client }): Promise<number> {
  return deps.knex().transaction(async (trx) => {
    const job: { endpoint_id: string } | undefined = await trx('webhook_endpoint_cleanups')
      .orderBy('created_at')
      .forUpdate()
      .skipLocked()
      .first('endpoint_id');
    if (!job) return 0;
    const ids: string[] = await trx('webhook_deliveries')
      .where({ endpoint_id: job.endpoint_id })
      .whereIn('status', ['pending', 'failed'])
      .whereNotNull('next_attempt_at')
      .orderBy('id')
      .limit(PAGE)
      .pluck('id');
    // Never attempted and in no queue (an ordered workflow holds it): it ends failed, ENDPOINT_DELETED.
    const pending: string[] = await trx('webhook_deliveries')
      .where({ endpoint_id: job.endpoint_id, status: 'pending' })
      .whereNotExists(trx('webhook_queue').whereRaw('webhook_queue.delivery_id = webhook_deliveries.id'))
      .whereNotExists(
        trx('webhook_attempts').whereRaw(
          'webhook_attempts.delivery_id = webhook_deliveries.id and duration_ms is null',
        ),
      )
      .orderBy('id')
      .limit(PAGE)
      .pluck('id');
    for (let i = 0; i < ids.length; i += SIDE_BY_SIDE)
      await Promise.all(
        ids.slice(i, i + SIDE_BY_SIDE).map((id) =>
          deps.temporal.workflow
            .getHandle(deliveryWorkflowId(id))
            .signal(endpointDeleted)
            .catch((err: unknown) => {
              if (!(err instanceof WorkflowNotFoundError)) throw err;
            }),
        ),
      );
    await stopWaiting(trx, [...new Set([...ids, ...pending])]);
    if (ids.length < PAGE && pending.length < PAGE)
      await trx('webhook_endpoint_cleanups').where({ endpoint_id: job.endpoint_id }).delete();
    if (ids.length || pending.length)
      logger.info(
        { endpointId: job.endpoint_id, count: ids.length + pending.length },
        'deleted endpoint: deliveries stopped',
      );
    return ids.length + pending.length;
  });
}
