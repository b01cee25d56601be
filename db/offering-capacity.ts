import type { Knex } from '@mikro-orm/postgresql';

/**
 * Offering capacity (docs/decisions/0278-offering-capacity-reservations.md): a subscription holds a
 * commitment of its total against its security class and its offering from creation until it is
 * cancelled, rejected or voided. The counters move only here, each in one conditional UPDATE: a
 * concurrent create waits on the row lock and PostgreSQL checks the bound again against the row
 * it then sees, so parallel creates can never pass the maximum together
 * (test/subscriptions/offering-capacity.test.ts).
 */

export interface Commitment {
  subscriptionId: string;
  offeringId: string;
  securityClassId: string;
  /** Decimal string in the offering's currency. */
  amount: string;
}

/** Where a commitment did not fit: which bound, its maximum, and what is still available under it. */
export interface CapacityShortfall {
  bound: 'offering' | 'security_class';
  maxAmount: string;
  committedAmount: string;
}

/**
 * Holds the commitment, or answers the bound it would pass (and holds nothing). A subscription
 * that already holds one (a replayed Idempotency-Key) is not counted twice. One whose commitment
 * was given back before it was ever recorded (its workflow never started, or its first record was
 * refused: docs/decisions/0365-refused-create-ends-its-workflow.md) holds it again: the API asks only
 * for a subscription it has no record of.
 */
export async function holdCommitment(knex: Knex, c: Commitment): Promise<CapacityShortfall | null> {
  try {
    await holdInTransaction(knex, c);
    return null;
  } catch (err) {
    if (err instanceof Full) return err.shortfall;
    throw err;
  }
}

/** Thrown inside the transaction so it rolls back with the commitment row it inserted. */
class Full extends Error {
  constructor(readonly shortfall: CapacityShortfall) {
    super('capacity reached');
  }
}

async function holdInTransaction(knex: Knex, c: Commitment): Promise<void> {
  await knex.transaction(async (trx) => {
    const inserted = await trx('offering_commitments')
      .insert({
        subscription_id: c.subscriptionId,
        offering_id: c.offeringId,
        security_class_id: c.securityClassId,
        amount: c.amount,
      })
      .onConflict('subscription_id')
      .merge({
        offering_id: c.offeringId,
        security_class_id: c.securityClassId,
        amount: c.amount,
        created_at: trx.fn.now(),
        released_at: null,
      })
      .whereNotNull('offering_commitments.released_at')
      .returning('subscription_id');
    if (inserted.length === 0) return;
    // The class first, then the offering, everywhere: one lock order, no deadlock.
    for (const [table, id, bound] of [
      ['security_classes', c.securityClassId, 'security_class'],
      ['offerings', c.offeringId, 'offering'],
    ] as const) {
      const moved = await trx(table)
        .where({ id })
        .andWhere((q) =>
          q.whereNull('max_amount').orWhereRaw('committed_amount + ?::numeric <= max_amount', [c.amount]),
        )
        .update({ committed_amount: trx.raw('committed_amount + ?::numeric', [c.amount]) })
        .returning('id');
      if (moved.length === 0) {
        const [row] = await trx(table).where({ id }).select('max_amount', 'committed_amount');
        throw new Full({ bound, maxAmount: String(row.max_amount), committedAmount: String(row.committed_amount) });
      }
    }
  });
}

/** Gives a commitment back, once: later calls for the same subscription change nothing. */
export async function releaseCommitment(trx: Knex | Knex.Transaction, subscriptionId: string): Promise<void> {
  const [released] = await trx('offering_commitments')
    .where({ subscription_id: subscriptionId })
    .whereNull('released_at')
    .update({ released_at: trx.fn.now() })
    .returning(['offering_id', 'security_class_id', 'amount']);
  if (!released) return;
  await trx('security_classes')
    .where({ id: released.security_class_id })
    .update({ committed_amount: trx.raw('committed_amount - ?::numeric', [released.amount]) });
  await trx('offerings')
    .where({ id: released.offering_id })
    .update({ committed_amount: trx.raw('committed_amount - ?::numeric', [released.amount]) });
}
