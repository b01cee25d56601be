/**
 * Decimal amounts without their currency: what workflow code may compare (it bundles no currency
 * table). lib/money.ts knows each currency's minor unit and builds on this.
 */

/** The most decimals any ISO 4217 currency has (CLF, UYW); money columns are numeric(19,4). */
export const MAX_DECIMALS = 4;

/** A sum of amounts (an offering's raised amount, numeric(39,4)): up to 35 whole digits. */
export const TOTAL_AMOUNT = new RegExp(`^(0|[1-9]\\d{0,34})(?:\\.(\\d{1,${MAX_DECIMALS}}))?$`);

/** Whether two decimal strings are the same amount ("12.5" and "12.50"); false for anything else. */
export function sameAmount(a: string, b: string): boolean {
  const scaled = (text: string): bigint | null => {
    const m = TOTAL_AMOUNT.exec(text);
    if (!m) return null;
    return BigInt(m[1]!) * 10n ** BigInt(MAX_DECIMALS) + BigInt((m[2] ?? '').padEnd(MAX_DECIMALS, '0'));
  };
  const x = scaled(a);
  return x !== null && x === scaled(b);
}
