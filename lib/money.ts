/**
 * The one money type: an integer count of minor units (cents) as a bigint. Money is never a
 * float; it crosses JSON and Temporal payloads as a two-decimal string ("1250.00").
 */
export type Cents = bigint;

const DECIMAL = /^(0|[1-9]\d{0,14})(?:\.(\d{1,2}))?$/;

export function isDecimalMoney(text: string): boolean {
  return DECIMAL.test(text);
}

/** "12.5" -> 1250n. Throws on anything that is not a non-negative decimal with at most 2 places. */
export function parseMoney(text: string): Cents {
  const m = DECIMAL.exec(text);
  if (!m) throw new RangeError(`not a money amount: ${JSON.stringify(text)}`);
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

/** price × units, exact. */
export function multiply(price: Cents, units: number | bigint): Cents {
  return price * BigInt(units);
}

/** Normalises a decimal string to two places ("12.5" -> "12.50"). */
export function normaliseMoney(text: string): string {
  return formatMoney(parseMoney(text));
}
