import type { Knex } from '@mikro-orm/postgresql';

/**
 * Retention (docs/decisions/0202-retention-what-is-kept.md) of the tables that are pruned by age alone,
 * oldest first, at most `limit` rows per statement and skipping rows a writer holds: processor notifications
 * received more than `seconds` ago (their event ids only deduplicate the processor's retries, which stop
 * within days), and Idempotency-Keys past their `expires_at` (IDEMPOTENCY_KEY_TTL_HOURS; an expired key is
 * already claimed afresh by its next request). Each answers the rows deleted.
 */
export async function prunePaymentNotifications(knex: Knex, seconds: number, limit: number): Promise<number> {
  return deleted(
    knex.raw(
      `delete from payment_notifications where ctid in (
         select ctid from payment_notifications where received_at < now() - make_interval(secs => ?)
          order by received_at limit ? for update skip locked)`,
      [seconds, limit],
    ),
  );
}

export async function pruneExpiredIdempotencyKeys(knex: Knex, limit: number): Promise<number> {
  return deleted(
    knex.raw(
      `delete from idempotency_keys where ctid in (
         select ctid from idempotency_keys where expires_at < now() order by expires_at limit ? for update skip locked)`,
      [limit],
    ),
  );
}

const deleted = async (statement: PromiseLike<unknown>) =>
  Number(((await statement) as { rowCount: number | null }).rowCount ?? 0);
