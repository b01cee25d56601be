import { PaymentRefused } from '../../domain/payment-processor';
import { currencyExponent, formatAmount, parseAmount } from '../../lib/money';

/**
 * Stripe's integer amounts are the currency's ISO 4217 minor units (lib/money), with Stripe's own
 * exceptions: ISK is sent with two extra zero places, and a three-decimal currency's amount must
 * end in 0 (https://docs.stripe.com/currencies, "Special cases").
 */
const EXTRA_PLACES: Record<string, number> = { ISK: 2 };

/** "1000" JPY -> 1000, "12.50" USD -> 1250, "12.340" BHD -> 12340. */
export function toStripeAmount(amount: string, currency: string): number {
  const code = currency.toUpperCase();
  const minor = parseAmount(amount, code) * 10n ** BigInt(EXTRA_PLACES[code] ?? 0);
  if (currencyExponent(code) === 3 && minor % 10n !== 0n) {
    throw new PaymentRefused(
      'STRIPE_AMOUNT_PRECISION',
      `Stripe takes ${code} amounts in steps of 0.010; ${amount} ${code} cannot be charged through it`,
    );
  }
  if (minor > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`amount too large for Stripe: ${amount}`);
  return Number(minor);
}

/** A Stripe object's integer amount and lower-case currency as our decimal string. */
export function fromStripeAmount(amount: number, currency: string): string {
  const code = currency.toUpperCase();
  return formatAmount(BigInt(amount) / 10n ** BigInt(EXTRA_PLACES[code] ?? 0), code);
}
