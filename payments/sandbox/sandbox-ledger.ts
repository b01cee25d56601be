import { randomUUID } from 'node:crypto';
import type { Knex } from '@mikro-orm/postgresql';
import type { Orm } from '../../db/orm';
import {
  SandboxCollectionSchema,
  SandboxSessionSchema,
  type SandboxCollection,
  type SandboxCollectionStatus,
  type SandboxSession,
  type SandboxSessionStatus,
} from '../../db/entities/payment-sandbox';
import { formatAmount } from '../../lib/money';
import type { SandboxEventType } from './sandbox-events';
import type { SandboxNotifier } from './notifier';

export type SessionOutcome = 'complete' | 'cancel' | 'decline';
export interface OutcomeResult {
  session: SandboxSession;
  /** Where the person's browser goes next. */
  redirectTo: string;
}

/** A paid session's or collection's table and the status it has while paid. */
const PAID = [
  ['payment_sandbox_sessions', 'complete'],
  ['payment_sandbox_collections', 'in_escrow'],
] as const;
interface PaymentRow {
  subscription_id: string;
  amount_cents: string;
  refunded_cents: string;
  currency: string;
  status: string;
}
/** A payment's row, locked when read inside a transaction (sessions: payment mode only). */
const paymentRow = async (db: Knex, table: string, id: string): Promise<PaymentRow | undefined> => {
  const q = db(table).where({ id });
  if (table === 'payment_sandbox_sessions') q.where({ mode: 'payment' });
  if (db.isTransaction) q.forUpdate();
  return (await q.first('subscription_id', 'amount_cents', 'refunded_cents', 'currency', 'status')) as
    PaymentRow | undefined;
};

/** A stored count of minor units in its currency's form. */
const amountOf = (minor: string | null, currency: string) =>
  minor === null ? null : formatAmount(BigInt(minor), currency);

/**
 * What happens inside the sandbox processor: a person finishing a session page, a collection
 * settling, an operator refunding or opening a dispute. Each state change is one conditional
 * UPDATE, so a double click or two operators racing change it once and notify once.
 */
export function sandboxLedger(orm: Orm, notifier: SandboxNotifier) {
  const em = () => orm.em.fork();
  const knex = () => orm.em.getConnection().getKnex();

  async function moveSession(
    id: string,
    from: SandboxSessionStatus,
    to: SandboxSessionStatus,
    patch: Partial<SandboxSession> = {},
  ) {
    return (
      (await em().nativeUpdate(
        SandboxSessionSchema,
        { id, status: from, expiresAt: { $gt: new Date() } },
        { status: to, ...patch },
      )) === 1
    );
  }
  async function moveCollection(id: string, from: SandboxCollectionStatus[], to: SandboxCollectionStatus) {
    return (
      (await em().nativeUpdate(
        SandboxCollectionSchema,
        { id, status: { $in: from } },
        { status: to, updatedAt: new Date() },
      )) === 1
    );
  }
  const notifySession = (type: SandboxEventType, s: SandboxSession, failureReason?: string) =>
    notifier.emit(type, {
      subscription_id: s.subscriptionId,
      reference: s.id,
      amount: amountOf(s.amountMinor, s.currency),
      currency: s.currency,
      failure_reason: failureReason ?? null,
    });
  const notifyCollection = (type: SandboxEventType, c: SandboxCollection, failureReason?: string) =>
    notifier.emit(type, {
      subscription_id: c.subscriptionId,
      reference: c.id,
      amount: amountOf(c.amountMinor, c.currency),
      currency: c.currency,
      failure_reason: failureReason ?? null,
    });

  /**
   * Refund part or all of a paid checkout session or a settled collection (null: what is left).
   * The payment's row is locked while it is taken, so two refunds never take more than was paid;
   * under an idempotency key a retry answers the first refund. Null when nothing was refunded:
   * unknown, not paid, disputed (unless `fromDisputed`, the operator's choice), or more than is left.
   */
  async function refund(
    reference: string,
    amountMinor: bigint | null,
    opts: { idempotencyKey?: string; fromDisputed?: boolean } = {},
  ): Promise<{ refundId: string; refundedMinor: bigint } | null> {
    const taken = await knex().transaction(async (trx) => {
      if (opts.idempotencyKey) {
        const first = await trx('payment_sandbox_refunds').where({ idempotency_key: opts.idempotencyKey }).first('id');
        if (first) return { refundId: first.id as string, fresh: false };
      }
      for (const [table, paidStatus] of PAID) {
        const from = [paidStatus, ...(opts.fromDisputed ? ['disputed'] : [])];
        const row = await paymentRow(trx, table, reference);
        if (!row || !from.includes(row.status)) continue;
        const amount = BigInt(row.amount_cents);
        const before = BigInt(row.refunded_cents);
        const take = amountMinor ?? amount - before;
        if (take <= 0n || before + take > amount) return null;
        await trx(table)
          .where({ id: reference })
          .update({
            refunded_cents: (before + take).toString(),
            status: before + take === amount ? 'refunded' : row.status,
          });
        const refundId = randomUUID();
        await trx('payment_sandbox_refunds').insert({
          id: refundId,
          idempotency_key: opts.idempotencyKey ?? refundId,
          reference,
          subscription_id: row.subscription_id,
          amount_cents: take.toString(),
        });
        return { refundId, fresh: true };
      }
      return null;
    });
    if (!taken) return null;
    const row =
      (await paymentRow(knex(), 'payment_sandbox_sessions', reference)) ??
      (await paymentRow(knex(), 'payment_sandbox_collections', reference))!;
    const refundedMinor = BigInt(row.refunded_cents);
    // The notification carries the payment's whole refunded amount, as Stripe's charge.refunded does.
    if (taken.fresh) {
      await notifier.emit('payment.refunded', {
        subscription_id: row.subscription_id,
        reference,
        amount: formatAmount(refundedMinor, row.currency),
        currency: row.currency,
        failure_reason: null,
      });
    }
    return { refundId: taken.refundId, refundedMinor };
  }

  return {
    session: (id: string) => em().findOne(SandboxSessionSchema, { id }),
    collection: (id: string) => em().findOne(SandboxCollectionSchema, { id }),
    collectionsOf: (subscriptionId: string) =>
      em().find(SandboxCollectionSchema, { subscriptionId }, { orderBy: { createdAt: 'asc' } }),

    /** The subscription a session or collection id belongs to, or null when it is neither. */
    async subscriptionOf(reference: string): Promise<string | null> {
      const s = await em().findOne(SandboxSessionSchema, { id: reference });
      if (s) return s.subscriptionId;
      return (await em().findOne(SandboxCollectionSchema, { id: reference }))?.subscriptionId ?? null;
    },

    /**
     * The person's choice on a session page. Returns null when the session is no longer open
     * (already finished, or expired): the page says so instead of acting twice.
     */
    async finishSession(id: string, outcome: SessionOutcome): Promise<OutcomeResult | null> {
      const now = new Date();
      let moved: boolean;
      if (outcome === 'complete') {
        const ref = `pm_sbx_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
        moved = await moveSession(id, 'open', 'complete', { completedAt: now, paymentMethodRef: ref });
      } else {
        moved = await moveSession(id, 'open', outcome === 'cancel' ? 'cancelled' : 'declined', { completedAt: now });
      }
      if (!moved) return null;
      const s = await em().findOneOrFail(SandboxSessionSchema, { id });
      if (s.mode === 'setup') {
        if (outcome === 'complete') await notifySession('setup.completed', s);
        else await notifySession('checkout.cancelled', s);
      } else if (outcome === 'complete') {
        await notifySession('payment.succeeded', s);
      } else if (outcome === 'decline') {
        await notifySession('payment.failed', s, 'card_declined');
      } else {
        await notifySession('checkout.cancelled', s);
      }
      return { session: s, redirectTo: outcome === 'complete' ? s.successUrl : s.cancelUrl };
    },

    /** Set A: funds captured and moved to escrow; the processor reports both steps. */
    async settleCollection(id: string): Promise<boolean> {
      if (!(await moveCollection(id, ['processing'], 'in_escrow'))) return false;
      const c = await em().findOneOrFail(SandboxCollectionSchema, { id });
      await notifyCollection('payment.succeeded', c);
      await notifyCollection('payment.in_escrow', c);
      return true;
    },

    async failCollection(id: string, reason: string): Promise<boolean> {
      if (!(await moveCollection(id, ['processing'], 'failed'))) return false;
      await notifyCollection('payment.failed', await em().findOneOrFail(SandboxCollectionSchema, { id }), reason);
      return true;
    },

    refund,

    /**
     * A dispute closes: won, the payment is paid again; lost, what was not refunded went back to
     * the payer (docs/decisions/0285-dispute-outcomes.md). False when the payment is not disputed.
     */
    async closeDispute(reference: string, outcome: 'won' | 'lost'): Promise<boolean> {
      const closed = await knex().transaction(async (trx) => {
        for (const [table, paidStatus] of PAID) {
          const row = await paymentRow(trx, table, reference);
          if (row?.status !== 'disputed') continue;
          const lost = BigInt(row.amount_cents) - BigInt(row.refunded_cents);
          await trx(table)
            .where({ id: reference })
            .update(
              outcome === 'won' ? { status: paidStatus } : { status: 'refunded', refunded_cents: row.amount_cents },
            );
          return { row, lost };
        }
        return null;
      });
      if (!closed) return false;
      await notifier.emit(outcome === 'won' ? 'payment.dispute_won' : 'payment.dispute_lost', {
        subscription_id: closed.row.subscription_id,
        reference,
        amount: formatAmount(closed.lost, closed.row.currency),
        currency: closed.row.currency,
        failure_reason: null,
      });
      return true;
    },

    /** Refund or dispute a paid checkout session or a settled collection, by its id. */
    async reverse(reference: string, how: 'refunded' | 'disputed'): Promise<boolean> {
      // A disputed payment can still be refunded from here (the operator's choice); a refunded one is over.
      if (how === 'refunded') return (await refund(reference, null, { fromDisputed: true })) !== null;
      const paidSession = await em().nativeUpdate(
        SandboxSessionSchema,
        { id: reference, mode: 'payment', status: 'complete' },
        { status: 'disputed' },
      );
      if (paidSession === 1) {
        await notifySession('payment.disputed', await em().findOneOrFail(SandboxSessionSchema, { id: reference }));
        return true;
      }
      if (!(await moveCollection(reference, ['in_escrow'], 'disputed'))) return false;
      await notifyCollection('payment.disputed', await em().findOneOrFail(SandboxCollectionSchema, { id: reference }));
      return true;
    },
  };
}

export type SandboxLedger = ReturnType<typeof sandboxLedger>;
