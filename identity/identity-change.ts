import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import type { Orm } from '../db/orm';
import { EVENT_SOURCES, type ServiceEvent } from '../domain/events';
import type { Config } from '../lib/runtime/config';
import { newId } from '../lib/ids';
import { publishEvents } from '../webhooks';

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
 * Runs an identity command in one transaction: its records, the gate's row and its events
 * (published: outbox, deliveries, queue) commit together. Commands for the same user
 * and organisation run one at a time (an advisory lock), so two starts cannot both succeed.
 */
export async function commitIdentityChange<T>(
  deps: { orm: Orm; config: Pick<Config, 'BEHAVIOUR_SET'> },
  subject: { orgId: string; userId: string } | null,
  work: (em: EntityManager) => Promise<IdentityChange<T>>,
  /** Writes the change's audit entry in its transaction (api/audit/audit-recorder.ts), when the command is audited. */
  audit?: (trx: Knex.Transaction, result: T) => Promise<void>,
): Promise<T> {
  return deps.orm.em.fork().transactional(async (em) => {
    const trx = em.getTransactionContext<Knex.Transaction>()!;
    if (subject)
      await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [
        `identity:${subject.orgId}:${subject.userId}`,
      ]);
    const change = await work(em);
    await em.flush();
    if (change.verification) await upsertVerification(trx, change.verification);
    await publishEvents(trx, change.events, { set: deps.config.BEHAVIOUR_SET });
    if (audit) await audit(trx, change.result);
    return change.result;
  });
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
