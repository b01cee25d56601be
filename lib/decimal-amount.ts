/**
 * Decimal amounts without their currency: what workflow code may compare (it bundles no currency
 * table). lib/money.ts knows each currency's minor unit and builds on this.
 */

/** The most decimals any ISO 4217 currency has (CLF, UYW); money columns are numeric(19,4). */
export const MAX_DECIMALS = 4;

/** A sum of amounts (an offering's raised amount, numeric(39,4)): up to 35 whole digits. */
export const TOTAL_AMOUNT = new RegExp(`^(0|[1-9]\\d{0,34})(?:\\.(\\d{1,${MAX_DECIMALS}}))?$`);

/** A decimal string as a count of ten-thousandths (MAX_DECIMALS places), or null when it is not one. */
export function scaledAmount(text: string): bigint | null {
  const m = TOTAL_AMOUNT.exec(text);
  if (!m) return null;
  return BigInt(m[1]!) * 10n ** BigInt(MAX_DECIMALS) + BigInt((m[2] ?? '').padEnd(MAX_DECIMALS, '0'));
}

/** Whether two decimal strings are the same amount ("12.5" and "12.50"); false for anything else. */
export function sameAmount(a: string, b: string): boolean {
  const x = scaledAmount(a);
  return x !== null && x === scaledAmount(b);
}

/**
 * A count of ten-thousandths back to a decimal string with the places of `like` (an amount already
 * in its currency's form, such as a subscription's total): 12_500_000n like "1.00" -> "1250.00".
 */
export function formatScaled(scaled: bigint, like: string): string {
  const places = like.includes('.') ? like.length - like.indexOf('.') - 1 : 0;
  const sign = scaled < 0n ? '-' : '';
  const abs = scaled < 0n ? -scaled : scaled;
  const unit = 10n ** BigInt(MAX_DECIMALS - places);
  const minor = abs / unit;
  if (places === 0) return `${sign}${minor}`;
  const scale = 10n ** BigInt(places);
  return `${sign}${minor / scale}.${(minor % scale).toString().padStart(places, '0')}`;
}
