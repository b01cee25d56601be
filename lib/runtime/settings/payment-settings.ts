import { z } from 'zod';
import { blankAsUnset, bool } from '../config-parsers';

/**
 * The payment processor: the sandbox or Stripe. Part of ConfigSchema (lib/runtime/config-schema.ts).
 */
export const paymentSettings = {
  /**
   * Which payment processor adapter runs (payments/): the built-in sandbox, or Stripe. The sandbox
   * moves no money, so production refuses it (named or by default) unless
   * PAYMENTS_SANDBOX_IN_PRODUCTION is on.
   */
  PAYMENT_PROCESSOR: blankAsUnset(z.enum(['sandbox', 'stripe']).default('sandbox')),
  /**
   * Runs the sandbox processor in production knowingly (a demo, the production shape on one
   * machine): /ready reports it (`payments_sandbox`) and the console's header says so on every page.
   */
  PAYMENTS_SANDBOX_IN_PRODUCTION: blankAsUnset(bool.default(false)),
  /** HMAC secret the sandbox signs its notifications with. Unset: a fixed development secret, refused in production. */
  SANDBOX_NOTIFICATION_SECRET: blankAsUnset(z.string().min(32).optional()),
  /** Where the sandbox POSTs its notifications. Unset: PUBLIC_BASE_URL + /payments/sandbox/notifications. */
  SANDBOX_NOTIFICATION_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Set A collections: the sandbox reports succeeded and in_escrow this long after collecting, when auto-settle is on. */
  SANDBOX_AUTO_SETTLE: bool.default(true),
  SANDBOX_SETTLEMENT_DELAY_MS: z.coerce.number().int().min(0).max(86_400_000).default(1500),
  /** Stripe: secret API key, the webhook endpoint's signing secret, and a base URL override (stripe-mock). */
  // Empty counts as unset: compose passes `${STRIPE_SECRET_KEY:-}` when the sandbox runs instead.
  STRIPE_SECRET_KEY: blankAsUnset(z.string().startsWith('sk_').optional()),
  STRIPE_WEBHOOK_SECRET: blankAsUnset(z.string().startsWith('whsec_').optional()),
  STRIPE_API_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Deadline of each Stripe API call (the SDK retries network failures within it up to twice). */
  STRIPE_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
};
