import { z } from 'zod';
import type { PaymentNotification } from '../../domain/subscription-messages';
import { SignatureError, subscriptionIdOrNull, type InboundEvent, type NotificationSource } from '../inbound-event';
import { SANDBOX_SIGNATURE_HEADER, verifySandboxSignature } from './signature';

/** Every notification the sandbox sends; only the payment.* ones move a subscription. */
const SANDBOX_EVENT_TYPES = [
  'setup.completed',
  'checkout.cancelled',
  'payment.processing',
  'payment.succeeded',
  'payment.failed',
  'payment.in_escrow',
  'payment.refunded',
  'payment.disputed',
  'payment.dispute_won',
  'payment.dispute_lost',
] as const;
export type SandboxEventType = (typeof SANDBOX_EVENT_TYPES)[number];

export interface SandboxEventData {
  subscription_id: string;
  /** The checkout or setup session, or the collection, the event is about. */
  reference: string;
  amount: string | null;
  currency: string;
  failure_reason?: string | null;
}

const KIND: Partial<Record<string, PaymentNotification['kind']>> = {
  'payment.processing': 'processing',
  'payment.succeeded': 'succeeded',
  'payment.failed': 'failed',
  'payment.in_escrow': 'in_escrow',
  'payment.refunded': 'refunded',
  'payment.disputed': 'disputed',
  'payment.dispute_won': 'dispute_won',
  'payment.dispute_lost': 'dispute_lost',
};

// Loose on purpose: a type we do not know is still acknowledged, so only the envelope is required.
const Envelope = z.object({
  id: z.string().min(1).max(200),
  type: z.string().min(1).max(100),
  data: z
    .object({
      subscription_id: z.unknown(),
      reference: z.string().nullable().optional(),
      amount: z.string().nullable().optional(),
      failure_reason: z.string().nullable().optional(),
    })
    .passthrough(),
});

export function sandboxNotificationSource(secret: string): NotificationSource {
  return {
    processor: 'sandbox',
    async read(rawBody, header): Promise<InboundEvent> {
      if (!verifySandboxSignature(secret, rawBody, header(SANDBOX_SIGNATURE_HEADER))) {
        throw new SignatureError('sandbox signature does not verify');
      }
      const event = Envelope.parse(JSON.parse(rawBody));
      const kind = KIND[event.type];
      const subscriptionId = subscriptionIdOrNull(event.data.subscription_id);
      const notifications: PaymentNotification[] = kind
        ? [
            {
              kind,
              processorEventId: `sandbox:${event.id}`,
              reference: event.data.reference ?? null,
              // One payment per session or collection: its reference names the payment.
              payment: event.data.reference ?? null,
              amount: event.data.amount ?? null,
              failureReason: event.data.failure_reason ?? null,
            },
          ]
        : [];
      return { id: event.id, type: event.type, subscriptionId, notifications };
    },
  };
}
