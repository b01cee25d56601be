import Stripe from 'stripe';
import type { Config } from '../../lib/config';

/**
 * The official SDK, pointed at Stripe or (STRIPE_API_URL) at stripe-mock. Every call has the
 * configured deadline; the SDK retries network failures and 409/5xx twice, with idempotency keys.
 */
export function stripeClient(
  config: Pick<Config, 'STRIPE_SECRET_KEY' | 'STRIPE_API_URL' | 'STRIPE_TIMEOUT_MS'>,
): Stripe {
  const options: Stripe.StripeConfig = {
    timeout: config.STRIPE_TIMEOUT_MS,
    maxNetworkRetries: 2,
    appInfo: { name: 'tranche' },
    telemetry: false,
  };
  if (config.STRIPE_API_URL) {
    const url = new URL(config.STRIPE_API_URL);
    options.host = url.hostname;
    options.port = url.port || (url.protocol === 'https:' ? 443 : 80);
    options.protocol = url.protocol === 'https:' ? 'https' : 'http';
  }
  return new Stripe(config.STRIPE_SECRET_KEY!, options);
}
