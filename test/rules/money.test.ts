import {
  currencyExponent,
  formatAmount,
  isDecimalAmount,
  maxAmount,
  multiply,
  normaliseAmount,
  parseAmount,
  toMinor,
  unitsToMillionths,
} from '../../lib/money';

/** lib/money.ts without a server: minor units by ISO 4217, exact products, the stored forms. */
describe('money, in minor units', () => {
  it('reads each currency with its ISO 4217 places, and refuses codes no investor pays in', () => {
    expect([currencyExponent('USD'), currencyExponent('JPY'), currencyExponent('BHD')]).toEqual([2, 0, 3]);
    expect(currencyExponent('XAU')).toBeNull(); // gold: an X-code
    expect(currencyExponent('ZZZ')).toBeNull();
  });

  it('turns decimal text into minor units exactly, and refuses more precision than the currency has', () => {
    expect(toMinor('12.5', 'USD')).toBe(1250n);
    expect(toMinor('1000', 'JPY')).toBe(1000n);
    expect(toMinor('1000.00', 'JPY')).toBe(1000n); // trailing zeros are exact
    expect(toMinor('1000.50', 'JPY')).toBeNull();
    expect(toMinor('12.500', 'BHD')).toBe(12500n);
    expect(toMinor('0.001', 'USD')).toBeNull();
    for (const bad of ['', '-1', '01', '1.', '.5', '1e3', '12,50', ' 1']) expect(toMinor(bad, 'USD')).toBeNull();
    expect(() => parseAmount('1.001', 'USD')).toThrow(RangeError);
  });

  it('writes minor units back in the currency’s form, sign included', () => {
    expect(formatAmount(1250n, 'USD')).toBe('12.50');
    expect(formatAmount(5n, 'USD')).toBe('0.05');
    expect(formatAmount(1000n, 'JPY')).toBe('1000');
    expect(formatAmount(12500n, 'BHD')).toBe('12.500');
    expect(formatAmount(-1250n, 'USD')).toBe('-12.50');
    expect(normaliseAmount('12.5000', 'USD')).toBe('12.50'); // as numeric(19,4) reads back
  });

  it('holds the largest amount a column holds: fifteen whole nines in any currency', () => {
    expect(formatAmount(maxAmount('USD'), 'USD')).toBe('999999999999999.99');
    expect(formatAmount(maxAmount('JPY'), 'JPY')).toBe('999999999999999');
    expect(isDecimalAmount('999999999999999.99')).toBe(true);
    expect(isDecimalAmount('1000000000000000')).toBe(false); // sixteen whole digits
  });

  it('multiplies a price by fractional units exactly, rounding half up once on the total', () => {
    expect(unitsToMillionths(0.1)).toBe(100_000n); // never 0.1000000000000000055
    expect(unitsToMillionths(1.0000001)).toBeNull();
    expect(multiply(1250n, 4)).toBe(5000n);
    expect(multiply(1000n, 0.1)).toBe(100n);
    expect(multiply(1n, 0.5)).toBe(1n); // half a cent rounds up
    expect(multiply(1n, 0.499999)).toBe(0n);
    expect(multiply(333n, 3)).toBe(999n);
    expect(() => multiply(100n, 0.0000001)).toThrow(RangeError);
  });
});
