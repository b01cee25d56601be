import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import type { Orm } from '../../db/orm';
import { appendEvents } from '../../db/outbox';
import { EVENT_SOURCES, type ServiceEvent } from '../../domain/events';
import type { EventDispatcher } from '../../activities/event-dispatcher';
import { newId } from '../../lib/ids';

/** What one identity command changed: its answer, its events, and the KYC gate's new status if it moved. */
export interface IdentityChange<T> {
  result: T;
  events: ServiceEvent[];
  /** The kyc_verifications status of (orgId, userId) after this change (spec §5.3 gate). */
  verification?: { orgId: string; userId: string; status: string };
}

export const identityEvent = (type: string, orgId: string, data: Record<string, unknown>): ServiceEvent => ({
  id: newId(),
  type,
  source: EVENT_SOURCES.identity,
  orgId,
  occurredAt: new Date().toISOString(),
  data,
});

/**
 * Runs an identity command in one transaction: its records, the gate's row and its events in the
 * outbox commit together; then the new events go to the dispatcher. Commands for the same user
 * and organisation run one at a time (an advisory lock), so two starts cannot both succeed.
 */
export async function commitIdentityChange<T>(
  deps: { orm: Orm; dispatcher: EventDispatcher },
  subject: { orgId: string; userId: string } | null,
  work: (em: EntityManager) => Promise<IdentityChange<T>>,
): Promise<T> {
  let fresh: string[] = [];
  const result = await deps.orm.em.fork().transactional(async (em) => {
    const trx = em.getTransactionContext<Knex.Transaction>()!;
    if (subject)
      await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [
        `identity:${subject.orgId}:${subject.userId}`,
      ]);
    const change = await work(em);
    await em.flush();
    if (change.verification) await upsertVerification(trx, change.verification);
    fresh = await appendEvents(trx, change.events);
    return change.result;
  });
  if (fresh.length) await deps.dispatcher.dispatch(fresh);
  return result;
}

async function upsertVerification(
  trx: Knex.Transaction,
  v: { orgId: string; userId: string; status: string },
): Promise<void> {
  await trx.raw(
    `insert into kyc_verifications (org_id, user_id, status, updated_at) values (?, ?, ?, now())
     on conflict (org_id, user_id) do update set status = excluded.status, updated_at = excluded.updated_at`,
    [v.orgId, v.userId, v.status],
  );
}
