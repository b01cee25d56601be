import Stripe from 'stripe';
import type { Config } from '../../lib/runtime/config';
import { inClientSpan, tracingOn } from '../../lib/runtime/tracing';

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
  const stripe = new Stripe(config.STRIPE_SECRET_KEY!, options);
  return tracingOn() ? traced(stripe) : stripe;
}

const RESOURCES = ['customers', 'checkout', 'paymentIntents', 'refunds', 'setupIntents', 'paymentMethods'];

/**
 * Traced (issue 21), each processor call is a span of its own (`stripe customers.create`), over
 * the HTTP spans of its tries: the resources the adapter uses are wrapped, nothing else changes.
 */
function traced(stripe: Stripe): Stripe {
  const wrap = (target: object, path: string): object =>
    new Proxy(target, {
      get(obj, key, receiver) {
        const value: unknown = Reflect.get(obj, key, receiver);
        if (typeof key !== 'string') return value;
        if (typeof value === 'function')
          return (...args: unknown[]) =>
            inClientSpan(`stripe ${path}.${key}`, { 'rpc.system': 'stripe', 'rpc.method': `${path}.${key}` }, () =>
              (value as (...a: unknown[]) => Promise<unknown>).apply(obj, args),
            );
        return value && typeof value === 'object' ? wrap(value, `${path}.${key}`) : value;
      },
    });
  return new Proxy(stripe, {
    get(obj, key, receiver) {
      const value: unknown = Reflect.get(obj, key, receiver);
      return typeof key === 'string' && RESOURCES.includes(key) && value && typeof value === 'object'
        ? wrap(value, key)
        : value;
    },
  });
}
