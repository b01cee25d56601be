import type { Knex } from '@mikro-orm/postgresql';
import { exactTime } from './keyset';

/**
 * Subscriptions whose last step failed (docs/decisions/0366-subscriptions-needing-attention.md): one
 * row per subscription, written by the activities' failure wrapper (activities/activity-failures.ts)
 * when a step of its workflow is refused for good or fails again and again, cleared in the
 * transaction of the next change the projection records. The one home of `subscription_attention`.
 */
export interface AttentionNote {
  subscriptionId: string;
  /** Known when the failing step carried the state (the projection); else looked up from the subscription. */
  orgId: string | null;
  /** The activity that failed: recordTransition, collectPayment, closeSessions… */
  step: string;
  /** DATA_REFUSED or CONSTRAINT_REFUSED (refused for good), RETRYING (still being retried), or another failure type. */
  failure: string;
  sqlstate: string | null;
  constraintName: string | null;
  /** The activity's attempt number, or 1 for a refusal that is not retried. */
  attempt: number;
}

/**
 * Notes a failure. The count goes on while the same step fails (at least the attempt number, one more
 * than the last note); another step failing starts it afresh. A subscription whose organisation is
 * unknown (no state, no projection) is not noted: the worker's metric and log still show it.
 */
export async function noteAttention(knex: Knex, n: AttentionNote): Promise<void> {
  await knex.raw(
    `insert into subscription_attention
       (subscription_id, org_id, step, failure, sqlstate, constraint_name, failed_attempts, first_failed_at, last_failed_at)
     select ?::uuid, o.org_id, ?, ?, ?, ?, ?, now(), now()
       from (select coalesce(?::uuid, (select org_id from subscriptions where id = ?::uuid)) as org_id) o
      where o.org_id is not null
     on conflict (subscription_id) do update set
       failure = excluded.failure, sqlstate = excluded.sqlstate, constraint_name = excluded.constraint_name,
       failed_attempts = case when subscription_attention.step = excluded.step
                              then greatest(subscription_attention.failed_attempts + 1, excluded.failed_attempts)
                              else excluded.failed_attempts end,
       first_failed_at = case when subscription_attention.step = excluded.step
                              then subscription_attention.first_failed_at else excluded.first_failed_at end,
       step = excluded.step, last_failed_at = excluded.last_failed_at`,
    [n.subscriptionId, n.step, n.failure, n.sqlstate, n.constraintName, n.attempt, n.orgId, n.subscriptionId],
  );
}

/** In the projection's transaction: the change it records is the subscription's last step, and it landed. */
export async function clearAttention(trx: Knex.Transaction, subscriptionId: string): Promise<void> {
  await trx('subscription_attention').where({ subscription_id: subscriptionId }).delete();
}

export interface AttentionRow {
  subscription_id: string;
  step: string;
  failure: string;
  sqlstate: string | null;
  constraint_name: string | null;
  failed_attempts: number;
  first_failed_at: Date;
  last_failed_at: Date;
  /** The subscription's status as last recorded; null when its first record was refused. */
  status: string | null;
  cursor_at: string;
}

/** An organisation's subscriptions needing attention, most recently failed first, after `after` (a decoded cursor). */
export async function listAttention(
  knex: Knex,
  orgId: string,
  page: { limit: number; after?: { at: string; id: string } },
): Promise<AttentionRow[]> {
  const { after } = page;
  const { rows } = await knex.raw<{ rows: AttentionRow[] }>(
    `select a.subscription_id, a.step, a.failure, a.sqlstate, a.constraint_name, a.failed_attempts,
            a.first_failed_at, a.last_failed_at, s.status, ${exactTime('a.last_failed_at')} as cursor_at
       from subscription_attention a
       left join subscriptions s on s.id = a.subscription_id
      where a.org_id = ?
        ${after ? 'and (a.last_failed_at, a.subscription_id) < (?::timestamptz, ?::uuid)' : ''}
      order by a.last_failed_at desc, a.subscription_id desc
      limit ?`,
    [orgId, ...(after ? [after.at, after.id] : []), page.limit],
  );
  return rows;
}

/** Every organisation's, for the metric (lib/runtime/metrics.ts). */
export async function countAttention(knex: Knex): Promise<number> {
  const [row] = await knex('subscription_attention').count<{ n: string }[]>({ n: '*' });
  return Number(row?.n ?? 0);
}
