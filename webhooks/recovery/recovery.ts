import type { Client } from '@temporalio/client';
import type { Knex } from '@mikro-orm/postgresql';
import type { WebhookDeliveryRow, WebhookRecoveryRow } from '../../db/entities/webhook-rows';
import { AppError } from '../../lib/errors';
import { retryDelivery, type DeliveryLookup } from './manual-retry';
import { lastAttemptNumber } from '../deliveries/attempt-store';
import type { BehaviourSet } from '../../lib/behaviour-set';
import { planMissingPage } from '../events/missing-events';

/** Retries sent side by side; the cursor is stored after each such chunk. */
const CHUNK = 20;
/** Answers of retryDelivery that mean "nothing to retry any more", not a failure of the recovery. */
const SETTLED = new Set(['DELIVERY_SUCCEEDED', 'DELIVERY_PENDING']);

export interface RecoveryStep {
  finished: boolean;
}

/** What one page of a recovery runs with: its activity's client, task queue, heartbeat and cancellation. */
export interface RecoveryRun {
  knex: Knex;
  temporal: Client;
  taskQueue: string;
  batchSize: number;
  /** The deployment's behaviour set: the event types a `missing` recovery may plan. */
  set: BehaviourSet;
  heartbeat(): void;
  cancelled(): boolean;
}

/**
 * Bulk recovery (docs/decisions/0167-bulk-recovery.md): one page of the endpoint's failed and exhausted
 * deliveries per call, oldest first, each retried through the manual retry's own function. Progress and the
 * cursor live in the recovery's row, written after every chunk, so a retried call (a worker that died, a
 * timeout) resumes where the last one stopped: at most one chunk is retried twice, which consumers absorb by
 * deduplicating (spec §6.1). A `missing` recovery first plans, page by page, the events its endpoint never
 * received (docs/decisions/0396-replay-missing.md), then retries as any other.
 */
export async function recoverPage(run: RecoveryRun, recoveryId: string): Promise<RecoveryStep> {
  const { knex } = run;
  const rec: WebhookRecoveryRow | undefined = await knex('webhook_recoveries').where({ id: recoveryId }).first();
  if (!rec || rec.status !== 'running') return { finished: true };
  if (rec.mode === 'missing' && !rec.missing_finished_at) return missingStep(run, rec);
  const page: WebhookDeliveryRow[] = await pageAfter(knex, rec, run.batchSize);
  const reads = batchLookup(knex, rec.endpoint_id);
  for (let i = 0; i < page.length; i += CHUNK) {
    if (await stopRequested(knex, rec)) return { finished: true };
    if (run.cancelled()) throw new Error('recovery batch interrupted; the next call resumes from the stored cursor');
    const chunk = page.slice(i, i + CHUNK);
    const outcomes = await Promise.all(
      chunk.map((d) =>
        retryDelivery({ temporal: run.temporal, taskQueue: run.taskQueue, reads }, d).then(
          () => 'done' as const,
          (err: unknown) => {
            if (err instanceof AppError && SETTLED.has(err.code)) return 'skipped' as const;
            throw err;
          },
        ),
      ),
    );
    const last = chunk[chunk.length - 1]!;
    await knex('webhook_recoveries')
      .where({ id: recoveryId, status: 'running' })
      .update({
        done: knex.raw('done + ?', [outcomes.filter((o) => o === 'done').length]),
        skipped: knex.raw('skipped + ?', [outcomes.filter((o) => o === 'skipped').length]),
        // The row's own timestamp, in SQL: a JavaScript Date would cut its microseconds.
        cursor_created_at: knex.raw('(select created_at from webhook_deliveries where id = ?)', [last.id]),
        cursor_id: last.id,
        updated_at: knex.fn.now(),
      });
    run.heartbeat();
  }
  if (page.length < run.batchSize) {
    await finish(knex, recoveryId, 'completed');
    return { finished: true };
  }
  return { finished: false };
}

/**
 * One page of the first phase: plans the next events the endpoint never received, in publication order, then
 * stores the cursor and the counts; a short page ends the phase. A page read again after a crash between the
 * two plans nothing more: its deliveries exist, so its events are no longer missing.
 */
async function missingStep(run: RecoveryRun, rec: WebhookRecoveryRow): Promise<RecoveryStep> {
  const { knex } = run;
  if (await stopRequested(knex, rec)) return { finished: true };
  const page = await planMissingPage(knex, {
    recoveryId: rec.id,
    endpointId: rec.endpoint_id,
    set: run.set,
    limit: run.batchSize,
  });
  await knex('webhook_recoveries')
    .where({ id: rec.id, status: 'running' })
    .update({
      done: knex.raw('done + ?', [page.planned]),
      skipped: knex.raw('skipped + ?', [page.read - page.planned]),
      ...(page.lastSeq !== null && { missing_cursor_seq: page.lastSeq }),
      ...(page.read < run.batchSize && { missing_finished_at: knex.fn.now() }),
      updated_at: knex.fn.now(),
    });
  run.heartbeat();
  return { finished: false };
}

/** The next page after the stored cursor: this endpoint's failed or exhausted deliveries created in [since, until]. */
function pageAfter(knex: Knex, rec: WebhookRecoveryRow, limit: number): Promise<WebhookDeliveryRow[]> {
  const q = knex<WebhookDeliveryRow>('webhook_deliveries')
    .where({ endpoint_id: rec.endpoint_id })
    .whereIn('status', ['failed', 'exhausted'])
    // The window and the cursor are read in SQL, at the microsecond the rows hold.
    .whereRaw(
      'created_at between (select since from webhook_recoveries where id = ?) and (select until from webhook_recoveries where id = ?)',
      [rec.id, rec.id],
    )
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .limit(limit);
  if (rec.cursor_id)
    q.whereRaw('(created_at, id) > (select cursor_created_at, cursor_id from webhook_recoveries where id = ?)', [
      rec.id,
    ]);
  return q.select('*') as unknown as Promise<WebhookDeliveryRow[]>;
}

/** A cancel from the API, or the endpoint deleted or disabled meanwhile, ends the recovery as cancelled. */
async function stopRequested(knex: Knex, rec: WebhookRecoveryRow): Promise<boolean> {
  const row:
    { cancel_requested_at: Date | null; status: string; endpoint_status: string; deleted_at: Date | null } | undefined =
    await knex('webhook_recoveries as r')
      .join('webhook_endpoints as e', 'e.id', 'r.endpoint_id')
      .where('r.id', rec.id)
      .first('r.cancel_requested_at', 'r.status', 'e.status as endpoint_status', 'e.deleted_at');
  if (
    row &&
    row.status === 'running' &&
    !row.cancel_requested_at &&
    row.endpoint_status === 'enabled' &&
    !row.deleted_at
  )
    return false;
  await finish(knex, rec.id, 'cancelled');
  return true;
}

/**
 * A completed recovery counts as skipped whatever of its total it did not retry: deliveries that
 * succeeded on their own before their page was read never reach a chunk.
 */
async function finish(knex: Knex, id: string, status: 'completed' | 'cancelled'): Promise<void> {
  await knex('webhook_recoveries')
    .where({ id, status: 'running' })
    .update({
      status,
      ...(status === 'completed' && { skipped: knex.raw('greatest(skipped, total - done)') }),
      finished_at: knex.fn.now(),
      updated_at: knex.fn.now(),
    });
}

/** The endpoint was checked enabled just before the chunk; the delivery itself is read fresh. */
function batchLookup(knex: Knex, endpointId: string): DeliveryLookup {
  return {
    async get(orgId, id) {
      const row: WebhookDeliveryRow | undefined = await knex('webhook_deliveries').where({ org_id: orgId, id }).first();
      if (!row) throw new Error(`delivery ${id} vanished during recovery`);
      return row;
    },
    endpointState: async (id) => (id === endpointId ? 'enabled' : 'deleted'),
    lastAttemptNumber: (id) => lastAttemptNumber(knex, id),
  };
}
