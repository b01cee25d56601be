import type { PaymentNotification } from '../domain/subscription-messages';

/**
 * A processor's notification once its signature is verified and its body read: what the intake
 * needs, whatever the processor. No notifications means "acknowledge and ignore".
 */
export interface InboundEvent {
  /** The processor's own event id: the idempotency key of the intake. */
  id: string;
  type: string;
  subscriptionId: string | null;
  notifications: PaymentNotification[];
}

/** Verifies and reads one notification request; throws SignatureError when it is not genuine. */
export interface NotificationSource {
  readonly processor: string;
  read(rawBody: string, header: (name: string) => string): Promise<InboundEvent>;
}

export class SignatureError extends Error {
  override name = 'SignatureError';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Metadata is the processor's free text: only a well-formed id is taken as a subscription. */
export const subscriptionIdOrNull = (value: unknown): string | null =>
  typeof value === 'string' && UUID.test(value) ? value.toLowerCase() : null;
