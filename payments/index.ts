import type { Config } from '../lib/runtime/config';
import type { Orm } from '../db/orm';
import type { PaymentProcessor } from '../domain/payment-processor';
import type { NotificationSource } from './inbound-event';
import { paymentReferences } from './payment-references';
import { sandboxNotificationSource } from './sandbox/sandbox-events';
import { createSandboxProcessor } from './sandbox/sandbox-processor';
import { sandboxSecret } from './sandbox/signature';
import { stripeClient } from './stripe/stripe-client';
import { stripeNotificationSource } from './stripe/stripe-events';
import { createStripeProcessor } from './stripe/stripe-processor';

// The payments' public face: the API and the activities import these, never a file behind them.
export { SignatureError, type InboundEvent, type NotificationSource } from './inbound-event';
export { createSandboxProcessor, type SandboxProcessor } from './sandbox/sandbox-processor';
export type { SandboxLedger, SessionOutcome } from './sandbox/sandbox-ledger';
export { SANDBOX_SIGNATURE_HEADER, sandboxSecret, signSandboxBody } from './sandbox/signature';

/** The deployment's payment processor: the built-in sandbox by default, Stripe when configured. */
export function createProcessor(config: Config, deps: { orm?: Orm } = {}): PaymentProcessor & { close?(): void } {
  // Both adapters keep records in PostgreSQL; callers that never reach a processor may omit it.
  if (!deps.orm) return unavailable();
  if (config.PAYMENT_PROCESSOR === 'stripe') {
    return createStripeProcessor(stripeClient(config), paymentReferences(deps.orm, 'stripe'));
  }
  return createSandboxProcessor(config, deps.orm);
}

function unavailable(): PaymentProcessor {
  const missing = async (): Promise<never> => {
    throw new Error('the payment processor was created without a database');
  };
  return {
    name: 'none',
    createSetupSession: missing,
    getSetupResult: missing,
    createCheckoutSession: missing,
    collect: missing,
    closeSessions: missing,
    refund: missing,
  };
}

/** The notification endpoints this deployment answers, one per processor (api/payments). */
export function notificationSources(config: Config, orm: Orm): NotificationSource[] {
  const sources: NotificationSource[] = [];
  if (config.PAYMENT_PROCESSOR === 'sandbox') sources.push(sandboxNotificationSource(sandboxSecret(config)));
  // Taken whenever a secret is set, so events of a Stripe deployment's past still land after a switch.
  if (config.STRIPE_WEBHOOK_SECRET && config.STRIPE_SECRET_KEY) {
    sources.push(
      stripeNotificationSource(stripeClient(config), config.STRIPE_WEBHOOK_SECRET, paymentReferences(orm, 'stripe')),
    );
  }
  return sources;
}
