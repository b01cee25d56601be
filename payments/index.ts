import type { Config } from '../lib/config';
import type { PaymentProcessor } from '../domain/payment-processor';

/** The deployment's payment processor (issue: payments adds the sandbox and Stripe adapters). */
export function createProcessor(_config: Config): PaymentProcessor {
  const missing = async (): Promise<never> => {
    throw new Error('no payment processor is configured');
  };
  return { name: 'none', createSetupSession: missing, getSetupResult: missing, createCheckoutSession: missing, collect: missing };
}
