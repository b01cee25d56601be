import type { Knex } from '@mikro-orm/postgresql';

/**
 * Offering capacity (docs/decisions/0278-offering-capacity-reservations.md): a subscription holds a
 * commitment of its total against its security class and its offering from creation until it is
 * cancelled, rejected or voided. The counters move only here, each in one conditional UPDATE: a
 * concurrent create waits on the row lock and PostgreSQL checks the bound again against the row
 * it then sees, so parallel creates can never pass the maximum together
 * (test/subscriptions/offering-capacity.test.ts). An offering's cap per investor is checked in the
 * same transaction, once the offering's row is locked (docs/decisions/0370-per-investor-cap.md); a
 * commitment whose workflow never started is given back by the create or by the sweep
 * (docs/decisions/0371-commitment-sweep.md).
 */

export interface Commitment {
  subscriptionId: string;
  offeringId: string;
  securityClassId: string;
  /** Whose it is: what one investor's live commitments hold is capped by the offering's max_per_investor. */
  investorId: string;
  /** Decimal string in the offering's currency. */
  amount: string;
}

/**
 * Where a commitment did not fit: which bound, its maximum, and what is held under it without this
 * commitment (for `investor`, what the investor's other live commitments in the offering hold).
 */
export interface CapacityShortfall {
  bound: 'offering' | 'security_class' | 'investor';
  maxAmount: string;
  committedAmount: string;
}

/**
 * Holds the commitment, or answers the bound it would pass (and holds nothing). A subscription
 * that already holds one (a replayed Idempotency-Key) is not counted twice; one whose commitment was
 * given back because its workflow never started (a retried create) holds it again, afresh. One given
 * back because its first record was refused (docs/decisions/0365-refused-create-ends-its-workflow.md)
 * stays given back: a retry with the same key is answered that refusal again.
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
    const row = {
      subscription_id: c.subscriptionId,
      offering_id: c.offeringId,
      security_class_id: c.securityClassId,
      investor_id: c.investorId,
      amount: c.amount,
    };
    const inserted = await trx('offering_commitments')
      .insert(row)
      .onConflict('subscription_id')
      .merge({ ...row, released_at: null, released_because: null, created_at: trx.fn.now() })
      .where('offering_commitments.released_because', 'never_started')
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
    await withinInvestorCap(trx, c);
  });
}

/**
 * The investor's live commitments in the offering, this one included, within its max_per_investor.
 * Read after the offering's UPDATE above: every hold and release of the offering locks that row
 * first, so this statement (a fresh snapshot under READ COMMITTED) sees every commitment committed
 * before ours, and a concurrent create by the same investor waits for ours to end before it reads.
 */
async function withinInvestorCap(trx: Knex.Transaction, c: Commitment): Promise<void> {
  const offering = await trx('offerings').where({ id: c.offeringId }).first('max_per_investor');
  if (offering?.max_per_investor === null || offering?.max_per_investor === undefined) return;
  const held = await trx('offering_commitments')
    .where({ offering_id: c.offeringId, investor_id: c.investorId })
    .whereNull('released_at')
    .first(
      trx.raw('(coalesce(sum(amount), 0) > ?::numeric) as over', [offering.max_per_investor]),
      trx.raw('(coalesce(sum(amount), 0) - ?::numeric)::text as before', [c.amount]),
    );
  if (held.over) {
    throw new Full({ bound: 'investor', maxAmount: String(offering.max_per_investor), committedAmount: held.before });
  }
}

interface CommitmentRow {
  offering_id: string;
  security_class_id: string;
  amount: string;
}
const COUNTED = ['offering_id', 'security_class_id', 'amount'];

/** Moves the class's and the offering's counters by a commitment's amount (class first: one lock order). */
async function moveCounters(trx: Knex | Knex.Transaction, row: CommitmentRow, sign: '+' | '-'): Promise<void> {
  const by = trx.raw(`committed_amount ${sign} ?::numeric`, [row.amount]);
  await trx('security_classes').where({ id: row.security_class_id }).update({ committed_amount: by });
  await trx('offerings').where({ id: row.offering_id }).update({ committed_amount: by });
}

/**
 * Gives a commitment back because its subscription ended (cancelled, rejected or voided), once:
 * later calls for the same subscription change nothing.
 */
export async function releaseCommitment(trx: Knex | Knex.Transaction, subscriptionId: string): Promise<void> {
  const [released] = await trx('offering_commitments')
    .where({ subscription_id: subscriptionId })
    .whereNull('released_at')
    .update({ released_at: trx.fn.now(), released_because: 'ended' })
    .returning(COUNTED);
  if (released) await moveCounters(trx, released, '-');
}

/**
 * Gives back the commitment of a create whose workflow never started (Temporal knows no such
 * workflow), in one transaction, only while no subscription is recorded for it. Answers what it gave
 * back, or null when there was nothing to give (released already, or the subscription exists).
 * The commitment's row is locked before the subscription is looked for, in a statement of its own:
 * a late start's first projection locks the same row before it records the subscription
 * (`reclaimCommitment`), so either this sees the subscription, or the projection takes back what
 * this gave. (A NOT EXISTS inside the UPDATE would keep the snapshot from before the wait.)
 */
export async function releaseNeverStarted(
  knex: Knex,
  subscriptionId: string,
): Promise<{ offeringId: string; amount: string } | null> {
  return knex.transaction(async (trx) => {
    const held = await trx('offering_commitments')
      .where({ subscription_id: subscriptionId })
      .whereNull('released_at')
      .forUpdate()
      .first('subscription_id');
    if (!held) return null;
    const recorded = await trx('subscriptions').where({ id: subscriptionId }).first('id');
    if (recorded) return null;
    const [released] = await trx('offering_commitments')
      .where({ subscription_id: subscriptionId })
      .update({ released_at: trx.fn.now(), released_because: 'never_started' })
      .returning(COUNTED);
    await moveCounters(trx, released, '-');
    return { offeringId: released.offering_id, amount: String(released.amount) };
  });
}

/**
 * A workflow that started after its commitment was given back as never started (its start was still
 * on its way when Temporal was asked) takes it again, without the bounds: the subscription exists, and
 * the counters must say what is held. Called with its first projection, before the subscription is
 * recorded: the row lock taken here orders it with `releaseNeverStarted`.
 */
export async function reclaimCommitment(trx: Knex.Transaction, subscriptionId: string): Promise<void> {
  const row = await trx('offering_commitments')
    .where({ subscription_id: subscriptionId })
    .forUpdate()
    .first('released_because');
  if (row?.released_because !== 'never_started') return;
  const [taken] = await trx('offering_commitments')
    .where({ subscription_id: subscriptionId })
    .update({ released_at: null, released_because: null })
    .returning(COUNTED);
  await moveCounters(trx, taken, '+');
}

/** Unreleased commitments older than `olderThanSeconds` with no subscription recorded: the sweep's candidates, oldest first. */
export async function commitmentsWithoutSubscription(
  knex: Knex,
  opts: { olderThanSeconds: number; limit: number },
): Promise<string[]> {
  const rows: { subscription_id: string }[] = await knex('offering_commitments as c')
    .whereNull('c.released_at')
    .where('c.created_at', '<', knex.raw(`now() - make_interval(secs => ?)`, [opts.olderThanSeconds]))
    .whereNotExists(knex('subscriptions as s').whereRaw('s.id = c.subscription_id').select(knex.raw('1')))
    .orderBy('c.created_at')
    .limit(opts.limit)
    .select('c.subscription_id');
  return rows.map((r) => r.subscription_id);
}

/** An unsigned subscription past its lifetime, as recorded: the sweep wakes its workflow with a deadline. */
export interface OverdueUnsigned {
  subscriptionId: string;
  /** Its own deadline, or, created before drafts expired, its creation plus the lifetime. */
  expiresAt: string;
}

/**
 * Subscriptions still draft or pending_signature `ttlSeconds` after creation, oldest first: they hold
 * capacity past the draft lifetime (docs/decisions/0368-unsigned-drafts-expire.md).
 */
export async function overdueUnsigned(
  knex: Knex,
  opts: { ttlSeconds: number; limit: number },
): Promise<OverdueUnsigned[]> {
  const rows: { id: string; expires_at: Date }[] = await knex('subscriptions')
    .whereIn('status', ['draft', 'pending_signature'])
    .where('created_at', '<', knex.raw(`now() - make_interval(secs => ?)`, [opts.ttlSeconds]))
    .orderBy('created_at')
    .limit(opts.limit)
    .select(
      'id',
      knex.raw(
        `coalesce((state->>'draftExpiresAt')::timestamptz, created_at + make_interval(secs => ?)) as expires_at`,
        [opts.ttlSeconds],
      ),
    );
  return rows.map((r) => ({ subscriptionId: r.id, expiresAt: new Date(r.expires_at).toISOString() }));
}
