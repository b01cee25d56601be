import type { Knex } from '@mikro-orm/postgresql';
import type { PruneStatement } from '../domain/retention-messages';

/**
 * Retention of the API's tables that are pruned by age alone (activities/retention.ts lists them
 * beside the engine's), oldest first, at most `limit` rows per statement and skipping rows a writer
 * holds; a group is done once a statement deletes fewer than `limit`. Here, not in api/, because
 * the worker's activities run them and may not import the API (docs/decisions/0328-one-home-per-table.md).
 */

/**
 * Processor notifications received more than `seconds` ago (api/payments/notification-intake.ts
 * writes them): their event ids only deduplicate the processor's retries, which stop within days.
 */
export async function prunePaymentNotifications(
  knex: Knex,
  opts: { seconds: number; afterSeq: string; limit: number },
): Promise<PruneStatement> {
  const n = await deleted(
    knex.raw(
      `delete from payment_notifications where ctid in (
         select ctid from payment_notifications where received_at < now() - make_interval(secs => ?)
          order by received_at limit ? for update skip locked)`,
      [opts.seconds, opts.limit],
    ),
  );
  return { deleted: { payment_notifications: n }, afterSeq: opts.afterSeq, done: n < opts.limit };
}

/**
 * Idempotency-Keys past their `expires_at` (IDEMPOTENCY_KEY_TTL_HOURS, set by
 * db/idempotency-keys.ts; an expired key is already claimed afresh by its next
 * request): the row's own expiry is the window.
 */
export async function pruneExpiredIdempotencyKeys(
  knex: Knex,
  opts: { afterSeq: string; limit: number },
): Promise<PruneStatement> {
  const n = await deleted(
    knex.raw(
      `delete from idempotency_keys where ctid in (
         select ctid from idempotency_keys where expires_at < now() order by expires_at limit ? for update skip locked)`,
      [opts.limit],
    ),
  );
  return { deleted: { idempotency_keys: n }, afterSeq: opts.afterSeq, done: n < opts.limit };
}

const deleted = async (statement: PromiseLike<unknown>) =>
  Number(((await statement) as { rowCount: number | null }).rowCount ?? 0);
