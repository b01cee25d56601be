import type { Knex } from '@mikro-orm/postgresql';
import { appendAuditEvent } from '../db/audit-log';
import type { Orm } from '../db/orm';
import type { BehaviourSet } from '../lib/behaviour-set';
import type { ProcessorAudit, ServiceEvent } from '../domain/events';
import { countedAmount, scaled } from '../domain/receipts';
import { CLOSES_SESSIONS, type SubscriptionState } from '../domain/subscription';
import { formatScaled } from '../lib/decimal-amount';
import { reclaimCommitment, releaseCommitment } from '../db/offering-capacity';
import { clearAttention } from '../db/subscription-attention';
import { publishEvents, takeForParent } from '../webhooks';
import type { ChildDelivery } from '../domain/webhook-messages';
import { cutToCodePoints } from '../lib/text';

/**
 * Writes a subscription transition: the projection row, its events (published: outbox, deliveries,
 * queue), (Set A, funds in escrow) the offering's counters and the audit entries of what a
 * processor's notification changed (held payments, refunds, disputes), in one transaction; a
 * subscription that ended unfulfilled gives its capacity commitment back (db/offering-capacity.ts). Idempotent: the row is written
 * only when its version is not older, events are keyed by id, counters by subscription, and an
 * audit entry is written only beside its event's first storing.
 * The same version is written again on purpose: when a workflow task is lost after this ran (a
 * worker or server died), its retry runs at a new workflow time, so the same version carries a
 * new updatedAt, and only the retry's is in the workflow's state (test/faults/temporal-restart.test.ts).
 */
export function createProjectionActivities(deps: { orm: Orm; set: BehaviourSet; shape?: 'engine' | 'workflow' }) {
  return {
    /**
     * Answers, in `workflow` shape, the deliveries the subscription workflow starts as its children
     * (docs/decisions/0298-workflow-shape-parents.md), at most `room` of them: the rest stay queued
     * for the engine to start as workflows of their own, so no parent holds more pending children
     * than Temporal allows (docs/decisions/0367-temporal-limits-kept.md); no limit when the
     * workflow names none (runs recorded before it). None in `engine` shape, where the dispatcher
     * sends them. Histories recorded before it answered anything replay as none. A value or row
     * PostgreSQL refuses fails it for good (activities/activity-failures.ts): the reference code's
     * unique constraint as REFERENCE_CODE_TAKEN, so the workflow draws again.
     */
    async recordTransition(state: SubscriptionState, events: ServiceEvent[], room?: number): Promise<ChildDelivery[]> {
      const knex = deps.orm.em.getConnection().getKnex();
      return knex.transaction(async (trx) => {
        // A start that arrived after its create gave the commitment back holds it again; its row is
        // locked before the subscription is recorded, so a release racing this one waits and then sees
        // the subscription (docs/decisions/0371-commitment-sweep.md).
        if (events.some((e) => e.type === 'subscription.created')) await reclaimCommitment(trx, state.id);
        await upsertProjection(trx, state);
        // The change landed: whatever step failed before it no longer holds the subscription up.
        await clearAttention(trx, state.id);
        if (state.set === 'A' && state.status === 'completed' && state.paymentStatus === 'in_escrow') {
          await creditOffering(trx, state);
        }
        // Cancelled, rejected or voided: its share of the offering's capacity is free again (decision 0278).
        if (CLOSES_SESSIONS.includes(state.status)) await releaseCommitment(trx, state.id);
        // Refunds and lost disputes take back what they returned (docs/decisions/0287-counters-follow-money.md).
        if (state.set === 'A' && state.status === 'completed') await settleCredit(trx, state);
        const published = await publishEvents(trx, events, { set: deps.set });
        const stored = new Set(published.eventIds);
        for (const e of events) if (e.audit && stored.has(e.id)) await auditProcessorChange(trx, state, e, e.audit);
        return deps.shape === 'workflow'
          ? takeForParent(
              trx,
              events.map((e) => e.id),
              room,
            )
          : [];
      });
    },

    /**
     * A subscription whose first record was refused ends without one: the capacity the API held for
     * it at create is given back (docs/decisions/0365-refused-create-ends-its-workflow.md). Once: a
     * second call changes nothing.
     */
    async releaseCapacity(subscriptionId: string): Promise<void> {
      await deps.orm.em
        .getConnection()
        .getKnex()
        .transaction((trx) => releaseCommitment(trx, subscriptionId));
    },
  };
}

/**
 * A change a processor's notification caused: the processor is the actor (`processor:<name>`, role
 * `system`), with the address and request id of the notification request that brought it.
 */
async function auditProcessorChange(
  trx: Knex.Transaction,
  state: SubscriptionState,
  event: ServiceEvent,
  audit: ProcessorAudit,
): Promise<void> {
  const { amount, reference, processor_event_id, reason } = event.data;
  await appendAuditEvent(trx, {
    orgId: state.orgId,
    actor: {
      userId: audit.system ? `system:${audit.system}` : `processor:${audit.processor ?? 'unknown'}`,
      roles: ['system'],
      apiKeyId: null,
      session: null,
      clientAddress: audit.clientAddress,
      requestId: audit.requestId,
    },
    action: audit.action,
    subject: { type: 'subscription', id: state.id },
    result: { outcome: 'succeeded' },
    before: audit.before,
    after: audit.system
      ? { status: state.status, ...(typeof reason === 'string' ? { reason: cutToCodePoints(reason, 200) } : {}) }
      : {
          payment_status: state.paymentStatus,
          amount: amount ?? null,
          reference: reference ?? null,
          processor_event_id: processor_event_id ?? null,
          ...(typeof reason === 'string' ? { reason: cutToCodePoints(reason, 200) } : {}),
        },
  });
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
    .where('amount', '>', 0)
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

/**
 * A credited subscription's credit follows its money: what its own payment brought minus what went
 * back of it (domain/receipts.ts countedAmount). The difference comes off the raised amount, and an
 * investor none of whose credits still hold money is no longer counted. Idempotent: a credit
 * already at its amount changes nothing. Takes the offering's lock like creditOffering.
 */
async function settleCredit(trx: Knex.Transaction, s: SubscriptionState): Promise<void> {
  const target = scaled(countedAmount(s));
  const peek = await trx('offering_credits').where({ subscription_id: s.id }).first('amount');
  if (!peek || scaled(String(peek.amount)) === target) return;
  await trx('offerings').where({ id: s.offeringId }).forUpdate().select('id');
  const credit = await trx('offering_credits').where({ subscription_id: s.id }).forUpdate().first('amount');
  const held = scaled(String(credit!.amount));
  if (held === target) return;
  const [others] = await trx('offering_credits')
    .where({ offering_id: s.offeringId, investor_id: s.investorId })
    .whereNot({ subscription_id: s.id })
    .where('amount', '>', 0)
    .count<{ n: string }[]>({ n: '*' });
  const elsewhere = Number(others?.n) > 0;
  const counted = (x: bigint) => (elsewhere || x > 0n ? 1 : 0);
  const asNumeric = (x: bigint) => formatScaled(x, '0.0000');
  await trx('offering_credits')
    .where({ subscription_id: s.id })
    .update({ amount: asNumeric(target) });
  await trx('offerings')
    .where({ id: s.offeringId })
    .update({
      raised_amount: trx.raw('raised_amount + ?::numeric', [asNumeric(target - held)]),
      investor_count: trx.raw('investor_count + ?', [counted(target) - counted(held)]),
      updated_at: trx.fn.now(),
    });
}
