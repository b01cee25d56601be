import type { Knex } from '@mikro-orm/postgresql';
import { ApplicationFailure } from '@temporalio/common';
import type { Orm } from '../db/orm';
import type { BehaviourSet } from '../lib/behaviour-set';
import type { ServiceEvent } from '../domain/events';
import type { SubscriptionState } from '../domain/subscription';
import { publishEvents } from '../webhooks';

/**
 * Writes a subscription transition: the projection row, its events (published: outbox, deliveries,
 * queue) and (Set A, funds in escrow) the offering's counters, in one transaction. Idempotent: the row is written
 * only when its version is not older, events are keyed by id and counters by subscription.
 * The same version is written again on purpose: when a workflow task is lost after this ran (a
 * worker or server died), its retry runs at a new workflow time, so the same version carries a
 * new updatedAt, and only the retry's is in the workflow's state (test/faults/temporal-restart).
 */
export function createProjectionActivities(deps: { orm: Orm; set: BehaviourSet }) {
  return {
    async recordTransition(state: SubscriptionState, events: ServiceEvent[]): Promise<void> {
      const knex = deps.orm.em.getConnection().getKnex();
      await knex.transaction(async (trx) => {
        await upsertProjection(trx, state).catch(referenceCodeTaken);
        if (state.set === 'A' && state.status === 'completed' && state.paymentStatus === 'in_escrow') {
          await creditOffering(trx, state);
        }
        await publishEvents(trx, events, { set: deps.set });
      });
    },
  };
}

/**
 * A reference code drawn by one workflow and already held by another subscription: retrying the
 * same write can never succeed, so the workflow is told to draw again (workflows/subscription.ts).
 */
function referenceCodeTaken(err: unknown): never {
  const pg = err as { code?: string; constraint?: string };
  if (pg.code === '23505' && pg.constraint === 'subscriptions_reference_code_key') {
    throw ApplicationFailure.nonRetryable('reference code already in use', 'REFERENCE_CODE_TAKEN');
  }
  throw err;
}

async function upsertProjection(trx: Knex.Transaction, s: SubscriptionState): Promise<void> {
  await trx.raw(
    `insert into subscriptions
       (id, org_id, offering_id, investor_id, status, payment_status, reference_code,
        request_hash, state, version, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?)
     on conflict (id) do update set
       status = excluded.status, payment_status = excluded.payment_status,
       reference_code = excluded.reference_code, state = excluded.state,
       version = excluded.version, updated_at = excluded.updated_at
     where subscriptions.version <= excluded.version`,
    [
      s.id,
      s.orgId,
      s.offeringId,
      s.investorId,
      s.status,
      s.paymentStatus,
      s.referenceCode,
      s.requestHash,
      JSON.stringify(s),
      s.version,
      s.createdAt,
      s.updatedAt,
    ],
  );
}

async function creditOffering(trx: Knex.Transaction, s: SubscriptionState): Promise<void> {
  // Two completions for one offering take turns here; otherwise each would count only its own
  // uncommitted credit and both would add the same investor (test/subscriptions/money.test.ts).
  await trx('offerings').where({ id: s.offeringId }).forUpdate().select('id');
  const credited = await trx('offering_credits')
    .insert({ subscription_id: s.id, offering_id: s.offeringId, investor_id: s.investorId, amount: s.totalAmount })
    .onConflict('subscription_id')
    .ignore()
    .returning('subscription_id');
  if (credited.length === 0) return;
  const [row] = await trx('offering_credits')
    .where({ offering_id: s.offeringId, investor_id: s.investorId })
    .count<{ n: string }[]>({ n: '*' });
  const firstFromInvestor = Number(row?.n) === 1;
  await trx('offerings')
    .where({ id: s.offeringId })
    .update({
      raised_amount: trx.raw('raised_amount + ?::numeric', [s.totalAmount]),
      investor_count: trx.raw('investor_count + ?', [firstFromInvestor ? 1 : 0]),
      updated_at: trx.fn.now(),
    });
}
