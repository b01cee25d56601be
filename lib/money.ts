/**
 * The one money type: an integer count of minor units (cents) as a bigint. Money is never a
 * float; it crosses JSON and Temporal payloads as a two-decimal string ("1250.00").
 */
export type Cents = bigint;

const DECIMAL = /^(0|[1-9]\d{0,14})(?:\.(\d{1,2}))?$/;
/** A sum of amounts (an offering's raised amount, numeric(38,2)): up to 36 whole digits. */
const TOTAL = /^(0|[1-9]\d{0,35})(?:\.(\d{1,2}))?$/;

export function isDecimalMoney(text: string): boolean {
  return DECIMAL.test(text);
}

/** "12.5" -> 1250n. Throws on anything that is not a non-negative decimal with at most 2 places. */
export function parseMoney(text: string, form: 'amount' | 'total' = 'amount'): Cents {
  const m = (form === 'total' ? TOTAL : DECIMAL).exec(text);
  if (!m) throw new RangeError(`not a money ${form}: ${JSON.stringify(text)}`);
  const whole = BigInt(m[1]!);
  const frac = BigInt((m[2] ?? '').padEnd(2, '0'));
  return whole * 100n + frac;
}

/** 1250n -> "12.50" */
export function formatMoney(cents: Cents): string {
  const sign = cents < 0n ? '-' : '';
  const abs = cents < 0n ? -cents : cents;
  return `${sign}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
}

/** Units are exact to this many decimals (docs/decisions/0060-fractional-units.md). */
export const UNIT_DECIMALS = 6;
const UNIT_SCALE = 10n ** BigInt(UNIT_DECIMALS);
const UNITS = new RegExp(`^(\\d+)(?:\\.(\\d{1,${UNIT_DECIMALS}}))?$`);

/** The largest amount any money column holds (numeric(18,2)) and parseMoney reads back. */
export const MAX_MONEY: Cents = 10n ** 17n - 1n;

/**
 * A unit count as millionths, read from its shortest decimal form (which is what JSON sent), so
 * 0.1 is exactly 100000 and never 0.1000000000000000055. Null when it has more than 6 decimals.
 */
export function unitsToMillionths(units: number): bigint | null {
  const m = UNITS.exec(String(units));
  if (!m) return null;
  return BigInt(m[1]!) * UNIT_SCALE + BigInt((m[2] ?? '').padEnd(UNIT_DECIMALS, '0'));
}

/** price × units, exact, rounded half up to the cent once, on the total (never per unit). */
export function multiply(price: Cents, units: number): Cents {
  const millionths = unitsToMillionths(units);
  if (millionths === null) throw new RangeError(`units must have at most ${UNIT_DECIMALS} decimals: ${units}`);
  return (price * millionths + UNIT_SCALE / 2n) / UNIT_SCALE;
}

/** Normalises a decimal string to two places ("12.5" -> "12.50"); a total may pass MAX_MONEY. */
export function normaliseMoney(text: string, form: 'amount' | 'total' = 'amount'): string {
  return formatMoney(parseMoney(text, form));
}
