import type { Knex } from '@mikro-orm/postgresql';
import { formatAmount, toMinor } from '../lib/money';
import type { RefundIntent, RefundIntentOutcome, RefundIntentStatus } from '../domain/refund-intents';

/**
 * The refund_intents table (db/migrations/0093-refund-intents.ts, docs/decisions/0374-refund-intents.md):
 * written before a refund is sent to the processor and settled with its outcome after. Every query of
 * the table is here.
 */

/** Thrown when an intent's amount is not an amount of its currency: nothing is sent for it. */
export class IntentAmountInvalid extends Error {}

/**
 * Records the intent as `requested`. Idempotent by its processor key: a replayed or retried write
 * finds the row it wrote and leaves it as it is.
 */
export async function recordIntent(knex: Knex, intent: RefundIntent): Promise<void> {
  const minor = toMinor(intent.amount, intent.currency, 'total');
  if (minor === null || minor <= 0n) {
    throw new IntentAmountInvalid(`not a positive ${intent.currency} amount: ${JSON.stringify(intent.amount)}`);
  }
  await knex('refund_intents')
    .insert({
      id: intent.id,
      org_id: intent.orgId,
      subscription_id: intent.subscriptionId,
      payment: intent.payment,
      amount_minor: minor.toString(),
      currency: intent.currency,
      processor_key: intent.processorKey,
      request_key: intent.requestKey,
      requested_by: intent.requestedBy,
      reason: intent.reason,
    })
    .onConflict('processor_key')
    .ignore();
}

/**
 * Settles the intent: `succeeded` with the processor's refund id, or `failed` (the processor refused:
 * nothing moved). `requested` again only notes why the outcome is not known. A settled intent does not
 * change again, so a retried settle after a replay is a no-op.
 */
export async function settleIntent(knex: Knex, outcome: RefundIntentOutcome): Promise<void> {
  const settled = outcome.status !== 'requested';
  await knex('refund_intents')
    .where({ id: outcome.id, status: 'requested' })
    .update({
      status: outcome.status,
      processor_refund_id: outcome.status === 'succeeded' ? outcome.refundId : null,
      failure: outcome.status === 'succeeded' ? null : outcome.failure,
      settled_at: settled ? knex.fn.now() : null,
    });
}

export interface IntentRow {
  id: string;
  payment: string;
  amount: string;
  currency: string;
  status: RefundIntentStatus;
  processor_key: string;
  processor_refund_id: string | null;
  request_key: string | null;
  requested_by: string;
  reason: string;
  failure: string | null;
  requested_at: string;
  settled_at: string | null;
}

/** A subscription's intents, oldest first (the organisation's only). */
export async function intentsOf(knex: Knex, orgId: string, subscriptionId: string): Promise<IntentRow[]> {
  const rows: (Omit<IntentRow, 'amount'> & { amount_minor: string })[] = await knex('refund_intents')
    .where({ org_id: orgId, subscription_id: subscriptionId })
    .orderBy([{ column: 'requested_at' }, { column: 'id' }])
    .select(
      'id',
      'payment',
      knex.raw('amount_minor::text as amount_minor'),
      'currency',
      'status',
      'processor_key',
      'processor_refund_id',
      'request_key',
      'requested_by',
      'reason',
      'failure',
      knex.raw(`to_char(requested_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as requested_at`),
      knex.raw(`to_char(settled_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as settled_at`),
    );
  return rows.map(({ amount_minor, ...r }) => ({ ...r, amount: formatAmount(BigInt(amount_minor), r.currency) }));
}
