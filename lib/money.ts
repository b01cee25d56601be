/**
 * The one money module. An amount is an integer count of its currency's minor units (a bigint,
 * never a float); the minor unit is ISO 4217's, read from a maintained copy of the standard
 * (currency-codes), so JPY has none, USD two, BHD three. Amounts cross JSON and Temporal payloads
 * as decimal strings with exactly the currency's places ("1250.00", "1000", "12.500").
 */
import { code as iso4217 } from 'currency-codes';
import { MAX_DECIMALS, TOTAL_AMOUNT } from './decimal-amount';

export type Minor = bigint;

/** Whole digits an amount may have: numeric(19,4) holds 15, as numeric(18,2) did before. */
const MAX_WHOLE_DIGITS = 15;
const DECIMAL = new RegExp(`^(0|[1-9]\\d{0,${MAX_WHOLE_DIGITS - 1}})(?:\\.(\\d{1,${MAX_DECIMALS}}))?$`);

/**
 * The ISO 4217 minor-unit exponent of a currency, or null when the code is not a currency an
 * investor can pay in (unknown, or one of the X-codes for metals, bond units, tests, "no currency").
 */
export function currencyExponent(currency: string): number | null {
  const record = iso4217(currency);
  if (!record || record.countries.every((c) => c.startsWith('Zz'))) return null;
  return record.digits;
}

/** An offering created before codes were checked may hold another code: it keeps two places. */
const exponentOf = (currency: string): number => currencyExponent(currency) ?? 2;

/** Text that is a non-negative decimal with at most MAX_DECIMALS places, whatever the currency. */
export function isDecimalAmount(text: string): boolean {
  return DECIMAL.test(text);
}

/**
 * "12.5" in USD -> 1250n; "1000" in JPY -> 1000n. Null when the text is not a decimal, or when it
 * is more precise than the currency's minor unit ("1000.50" in JPY; trailing zeros are exact and
 * pass: "1000.00" in JPY is 1000n).
 */
export function toMinor(text: string, currency: string, form: 'amount' | 'total' = 'amount'): Minor | null {
  const m = (form === 'total' ? TOTAL_AMOUNT : DECIMAL).exec(text);
  if (!m) return null;
  const exponent = exponentOf(currency);
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  if (fraction.length > exponent) return null;
  return BigInt(m[1]!) * 10n ** BigInt(exponent) + BigInt(fraction.padEnd(exponent, '0') || '0');
}

/** How a currency's precision reads in an error: "amounts have no decimals", "… at most 2 decimals". */
export function currencyPlaces(currency: string): string {
  const exponent = exponentOf(currency);
  return exponent === 0 ? 'amounts have no decimals' : `amounts have at most ${exponent} decimals`;
}

/** toMinor, throwing where a value was already validated (stored amounts, the API's own totals). */
export function parseAmount(text: string, currency: string, form: 'amount' | 'total' = 'amount'): Minor {
  const minor = toMinor(text, currency, form);
  if (minor === null) throw new RangeError(`not a ${currency} ${form}: ${JSON.stringify(text)}`);
  return minor;
}

/** 1250n in USD -> "12.50"; 1000n in JPY -> "1000"; 12500n in BHD -> "12.500". */
export function formatAmount(minor: Minor, currency: string): string {
  const exponent = exponentOf(currency);
  const sign = minor < 0n ? '-' : '';
  const abs = minor < 0n ? -minor : minor;
  if (exponent === 0) return `${sign}${abs}`;
  const scale = 10n ** BigInt(exponent);
  return `${sign}${abs / scale}.${(abs % scale).toString().padStart(exponent, '0')}`;
}

/** A stored or sent amount in its currency's form ("12.5000" read from numeric(19,4) -> "12.50"). */
export function normaliseAmount(text: string, currency: string, form: 'amount' | 'total' = 'amount'): string {
  return formatAmount(parseAmount(text, currency, form), currency);
}

/** The largest amount any money column holds and an API answer carries: 15 nines, any currency. */
export function maxAmount(currency: string): Minor {
  return 10n ** BigInt(MAX_WHOLE_DIGITS + exponentOf(currency)) - 1n;
}

/** Units are exact to this many decimals (docs/decisions/0060-fractional-units.md). */
export const UNIT_DECIMALS = 6;
const UNIT_SCALE = 10n ** BigInt(UNIT_DECIMALS);
const UNITS = new RegExp(`^(\\d+)(?:\\.(\\d{1,${UNIT_DECIMALS}}))?$`);

/**
 * A unit count as millionths, read from its shortest decimal form (which is what JSON sent), so
 * 0.1 is exactly 100000 and never 0.1000000000000000055. Null when it has more than 6 decimals.
 */
export function unitsToMillionths(units: number): bigint | null {
  const m = UNITS.exec(String(units));
  if (!m) return null;
  return BigInt(m[1]!) * UNIT_SCALE + BigInt((m[2] ?? '').padEnd(UNIT_DECIMALS, '0'));
}

/** price × units, exact, rounded half up to the minor unit once, on the total (never per unit). */
export function multiply(price: Minor, units: number): Minor {
  const millionths = unitsToMillionths(units);
  if (millionths === null) throw new RangeError(`units must have at most ${UNIT_DECIMALS} decimals: ${units}`);
  return (price * millionths + UNIT_SCALE / 2n) / UNIT_SCALE;
}
