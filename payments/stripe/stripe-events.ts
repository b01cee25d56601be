import type Stripe from 'stripe';
import type { PaymentNotification } from '../../domain/subscription-messages';
import { SignatureError, subscriptionIdOrNull, type InboundEvent, type NotificationSource } from '../inbound-event';
import type { PaymentReferences } from '../payment-references';
import { fromStripeAmount } from './stripe-amounts';

type Kind = PaymentNotification['kind'];
interface Mapped {
  subscriptionId: string | null;
  /**
   * The PaymentIntent to remember for later refunds and disputes, when the event names one: also
   * the payment's identity, the same for the session's and the intent's notifications.
   */
  paymentIntent: string | null;
  /** The object's currency, lower case as Stripe writes it. */
  currency: string | null;
  notifications: [Kind, string | null, number | null, string | null][];
}

const idOf = (v: string | { id: string } | null | undefined): string | null =>
  v == null ? null : typeof v === 'string' ? v : v.id;
const IGNORED: Mapped = { subscriptionId: null, paymentIntent: null, currency: null, notifications: [] };

/** The Stripe events that move a subscription; every other type is acknowledged and ignored. */
function mapEvent(event: Stripe.Event): Mapped {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
    case 'checkout.session.async_payment_failed': {
      const s = event.data.object;
      if (s.mode !== 'payment') return IGNORED; // setup completion is read by finalize-setup instead
      const kind: Kind =
        event.type === 'checkout.session.async_payment_failed'
          ? 'failed'
          : event.type === 'checkout.session.async_payment_succeeded' || s.payment_status !== 'unpaid'
            ? 'succeeded'
            : 'processing'; // completed but unpaid: a delayed method (ACH) is still settling
      const reason = kind === 'failed' ? 'async_payment_failed' : null;
      return {
        subscriptionId: subscriptionIdOrNull(s.metadata?.subscription_id),
        paymentIntent: idOf(s.payment_intent),
        currency: s.currency,
        notifications: [[kind, s.id, s.amount_total, reason]],
      };
    }
    case 'payment_intent.processing':
    case 'payment_intent.succeeded':
    case 'payment_intent.payment_failed': {
      const pi = event.data.object;
      const base = {
        subscriptionId: subscriptionIdOrNull(pi.metadata?.subscription_id),
        paymentIntent: pi.id,
        currency: pi.currency,
      };
      if (event.type === 'payment_intent.processing')
        return { ...base, notifications: [['processing', pi.id, pi.amount, null]] };
      if (event.type === 'payment_intent.payment_failed') {
        const e = pi.last_payment_error;
        return {
          ...base,
          notifications: [['failed', pi.id, pi.amount, e?.decline_code ?? e?.code ?? 'payment_failed']],
        };
      }
      // A collection is a charge to the platform account that holds investor funds in escrow
      // (docs/decisions/0030-stripe-escrow.md): its success is both "received" and "in escrow".
      return pi.metadata?.purpose === 'collection'
        ? {
            ...base,
            notifications: [
              ['succeeded', pi.id, pi.amount, null],
              ['in_escrow', pi.id, pi.amount, null],
            ],
          }
        : { ...base, notifications: [['succeeded', pi.id, pi.amount, null]] };
    }
    case 'charge.refunded': {
      // Partial or full: amount_refunded is the charge's whole refunded amount so far, which the
      // workflow compares with what it recorded (docs/decisions/0284-refunds.md).
      const charge = event.data.object;
      return {
        subscriptionId: subscriptionIdOrNull(charge.metadata?.subscription_id),
        paymentIntent: idOf(charge.payment_intent),
        currency: charge.currency,
        notifications: [['refunded', charge.id, charge.amount_refunded, null]],
      };
    }
    case 'charge.dispute.created': {
      const dispute = event.data.object;
      return {
        subscriptionId: subscriptionIdOrNull(dispute.metadata?.subscription_id),
        paymentIntent: idOf(dispute.payment_intent),
        currency: dispute.currency,
        notifications: [['disputed', dispute.id, dispute.amount, dispute.reason]],
      };
    }
    case 'charge.dispute.closed': {
      // Won (or an inquiry closed without a chargeback): the funds stay; lost: they went back
      // to the payer (docs/decisions/0285-dispute-outcomes.md). Other statuses are not closings.
      const dispute = event.data.object;
      const kind: Kind | null =
        dispute.status === 'won' || dispute.status === 'warning_closed'
          ? 'dispute_won'
          : dispute.status === 'lost'
            ? 'dispute_lost'
            : null;
      if (!kind) return IGNORED;
      return {
        subscriptionId: subscriptionIdOrNull(dispute.metadata?.subscription_id),
        paymentIntent: idOf(dispute.payment_intent),
        currency: dispute.currency,
        notifications: [[kind, dispute.id, dispute.amount, dispute.status]],
      };
    }
    default:
      return IGNORED;
  }
}

/** Verifies Stripe's signature scheme (Stripe-Signature, timestamped HMAC) and maps the event. */
export function stripeNotificationSource(
  stripe: Stripe,
  webhookSecret: string,
  references: PaymentReferences,
): NotificationSource {
  return {
    processor: 'stripe',
    async read(rawBody, header): Promise<InboundEvent> {
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(rawBody, header('stripe-signature'), webhookSecret);
      } catch (err) {
        throw new SignatureError(err instanceof Error ? err.message : 'Stripe signature does not verify');
      }
      const mapped = mapEvent(event);
      let subscriptionId = mapped.subscriptionId;
      if (mapped.paymentIntent) {
        if (subscriptionId) await references.remember(mapped.paymentIntent, subscriptionId);
        else subscriptionId = await references.subscriptionOf(mapped.paymentIntent);
      }
      const notifications = mapped.notifications.map(
        ([kind, reference, minor, failureReason], i): PaymentNotification => ({
          kind,
          // One event may carry two notifications (collection: succeeded then in_escrow).
          processorEventId: i === 0 ? `stripe:${event.id}` : `stripe:${event.id}:${kind}`,
          reference,
          payment: mapped.paymentIntent,
          amount: minor === null || !mapped.currency ? null : fromStripeAmount(minor, mapped.currency),
          failureReason,
        }),
      );
      return { id: event.id, type: event.type, subscriptionId, notifications };
    },
  };
}
