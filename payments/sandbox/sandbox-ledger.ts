import { randomUUID } from 'node:crypto';
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
import type { SandboxEventType } from './events';
import type { SandboxNotifier } from './notifier';

export type SessionOutcome = 'complete' | 'cancel' | 'decline';
export interface OutcomeResult {
  session: SandboxSession;
  /** Where the person's browser goes next. */
  redirectTo: string;
}

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

    /** Refund or dispute a paid checkout session or a settled collection, by its id. */
    async reverse(reference: string, how: 'refunded' | 'disputed'): Promise<boolean> {
      const type: SandboxEventType = how === 'refunded' ? 'payment.refunded' : 'payment.disputed';
      // A disputed payment can still be refunded; a refunded one is over.
      const sessionFrom: SandboxSessionStatus[] = how === 'refunded' ? ['complete', 'disputed'] : ['complete'];
      const collectionFrom: SandboxCollectionStatus[] = how === 'refunded' ? ['in_escrow', 'disputed'] : ['in_escrow'];
      const paidSession = await em().nativeUpdate(
        SandboxSessionSchema,
        { id: reference, mode: 'payment', status: { $in: sessionFrom } },
        { status: how },
      );
      if (paidSession === 1) {
        await notifySession(type, await em().findOneOrFail(SandboxSessionSchema, { id: reference }));
        return true;
      }
      if (!(await moveCollection(reference, collectionFrom, how))) return false;
      await notifyCollection(type, await em().findOneOrFail(SandboxCollectionSchema, { id: reference }));
      return true;
    },
  };
}

export type SandboxLedger = ReturnType<typeof sandboxLedger>;
