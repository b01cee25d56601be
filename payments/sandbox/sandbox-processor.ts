import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Orm } from '../../db/orm';
import { SandboxCollectionSchema, SandboxSessionSchema } from '../../db/entities/payment-sandbox';
import type { Config } from '../../lib/runtime/config';
import { logger } from '../../lib/runtime/logger';
import { parseAmount } from '../../lib/money';
import {
  PaymentRefused,
  type Collection,
  type CollectionRequest,
  type PaymentProcessor,
  type Refund,
  type RefundRequest,
  type Session,
  type SessionRequest,
  type SetupResult,
} from '../../domain/payment-processor';
import { SandboxNotifier } from './notifier';
import { sandboxLedger, type SandboxLedger } from './sandbox-ledger';
import { sandboxSecret } from './signature';

/** An abandoned session page stops accepting a choice after this long, like a processor's. */
const SESSION_LIFETIME_MS = 24 * 60 * 60 * 1000;

export type SandboxProcessor = PaymentProcessor & {
  readonly ledger: SandboxLedger;
  readonly notifier: SandboxNotifier;
  close(): void;
};

const sandboxNotificationUrl = (config: Pick<Config, 'SANDBOX_NOTIFICATION_URL' | 'PUBLIC_BASE_URL'>) =>
  config.SANDBOX_NOTIFICATION_URL ?? `${config.PUBLIC_BASE_URL!.replace(/\/$/, '')}/payments/sandbox/notifications`;

/**
 * The built-in processor: sessions live in PostgreSQL and are completed by a person on pages the
 * service serves (api/payments/sandbox-pages-router.ts); outcomes come back as signed HTTP
 * notifications, as from a real processor. Set A collections settle after a delay, or when an
 * operator says so (api/payments/sandbox-operator-router.ts).
 */
export function createSandboxProcessor(
  config: Pick<
    Config,
    | 'PUBLIC_BASE_URL'
    | 'SANDBOX_NOTIFICATION_SECRET'
    | 'NODE_ENV'
    | 'SANDBOX_NOTIFICATION_URL'
    | 'SANDBOX_AUTO_SETTLE'
    | 'SANDBOX_SETTLEMENT_DELAY_MS'
  >,
  orm: Orm,
): SandboxProcessor {
  const notifier = new SandboxNotifier(orm, sandboxNotificationUrl(config), sandboxSecret(config));
  const ledger = sandboxLedger(orm, notifier);
  const base = config.PUBLIC_BASE_URL!.replace(/\/$/, '');
  const settlements = new Set<NodeJS.Timeout>();

  async function openSession(mode: 'setup' | 'payment', req: SessionRequest): Promise<Session> {
    const id = randomUUID();
    const now = new Date();
    const em = orm.em.fork();
    // One open session per subscription: an older page left open cannot take a second payment.
    await em.nativeUpdate(
      SandboxSessionSchema,
      { subscriptionId: req.subscriptionId, mode, status: 'open' },
      { status: 'superseded' },
    );
    await em.insert(SandboxSessionSchema, {
      id,
      mode,
      subscriptionId: req.subscriptionId,
      investorId: req.investorId,
      method: req.method,
      amountMinor: mode === 'payment' ? parseAmount(req.amount!, req.currency).toString() : null,
      currency: req.currency,
      successUrl: req.successUrl,
      cancelUrl: req.cancelUrl,
      status: 'open',
      paymentMethodRef: null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + SESSION_LIFETIME_MS),
      completedAt: null,
    });
    return { sessionId: id, sessionUrl: `${base}/sandbox/${mode === 'setup' ? 'setup' : 'checkout'}/${id}` };
  }

  function scheduleSettlement(collectionId: string): void {
    if (!config.SANDBOX_AUTO_SETTLE) return;
    const timer = setTimeout(() => {
      settlements.delete(timer);
      ledger
        .settleCollection(collectionId)
        .catch((err) => logger.warn({ err, collectionId }, 'sandbox settlement failed'));
    }, config.SANDBOX_SETTLEMENT_DELAY_MS);
    timer.unref();
    settlements.add(timer);
  }

  return {
    name: 'sandbox',
    ledger,
    notifier,

    createSetupSession: (req) => openSession('setup', req),

    createCheckoutSession(req) {
      if (!req.amount) throw new PaymentRefused('AMOUNT_REQUIRED', 'a checkout session needs an amount');
      return openSession('payment', req);
    },

    async getSetupResult(sessionId: string): Promise<SetupResult> {
      const s = await orm.em.fork().findOne(SandboxSessionSchema, { id: sessionId, mode: 'setup' });
      if (s?.status === 'complete') return { status: 'complete', paymentMethodRef: s.paymentMethodRef };
      if (s?.status === 'open' && s.expiresAt > new Date()) return { status: 'open', paymentMethodRef: null };
      return { status: 'expired', paymentMethodRef: null };
    },

    /** Idempotent by the request's key: a retried activity finds its first collection. */
    async collect(req: CollectionRequest): Promise<Collection> {
      const em = orm.em.fork();
      const existing = await em.findOne(SandboxCollectionSchema, { idempotencyKey: req.idempotencyKey });
      if (existing) return { collectionId: existing.id };
      const setup = await em.findOne(SandboxSessionSchema, {
        id: req.setupSessionId,
        mode: 'setup',
        status: 'complete',
      });
      if (!setup)
        throw new PaymentRefused(
          'NO_PAYMENT_METHOD',
          `setup session ${req.setupSessionId} has no linked payment method`,
        );
      const id = randomUUID();
      const now = new Date();
      try {
        await em.insert(SandboxCollectionSchema, {
          id,
          idempotencyKey: req.idempotencyKey,
          subscriptionId: req.subscriptionId,
          setupSessionId: setup.id,
          amountMinor: parseAmount(req.amount, req.currency).toString(),
          currency: req.currency,
          status: 'processing',
          createdAt: now,
          updatedAt: now,
        });
      } catch (err) {
        if (!(err instanceof UniqueConstraintViolationException)) throw err;
        const winner = await orm.em
          .fork()
          .findOneOrFail(SandboxCollectionSchema, { idempotencyKey: req.idempotencyKey });
        return { collectionId: winner.id };
      }
      const c = await em.findOneOrFail(SandboxCollectionSchema, { id });
      await notifier.emit('payment.processing', {
        subscription_id: c.subscriptionId,
        reference: id,
        amount: req.amount,
        currency: c.currency,
      });
      scheduleSettlement(id);
      return { collectionId: id };
    },

    /** Idempotent by the request's key; refuses what is not a paid payment of the subscription, or more than is left. */
    async refund(req: RefundRequest): Promise<Refund> {
      const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(req.payment);
      if (!uuid || (await ledger.subscriptionOf(req.payment)) !== req.subscriptionId) {
        throw new PaymentRefused(
          'NOT_A_SANDBOX_PAYMENT',
          `payment ${req.payment} is not a sandbox payment of this subscription`,
        );
      }
      const done = await ledger.refund(req.payment, parseAmount(req.amount, req.currency), {
        idempotencyKey: req.idempotencyKey,
      });
      if (!done)
        throw new PaymentRefused(
          'REFUND_REFUSED',
          `payment ${req.payment} cannot be refunded ${req.amount} ${req.currency}`,
        );
      return { refundId: done.refundId };
    },

    async closeSessions(subscriptionId: string): Promise<void> {
      await orm.em.fork().nativeUpdate(SandboxSessionSchema, { subscriptionId, status: 'open' }, { status: 'closed' });
    },

    close() {
      for (const t of settlements) clearTimeout(t);
      settlements.clear();
      notifier.close();
    },
  };
}
