import { describe, expect, it } from 'bun:test';
import { MAX_PRICE_ATOMIC, X402Error, formatPrice, formatPriceUsd, parsePrice, rescaleAtomic } from 'skill-market/x402';
import { thrown } from './factories';

function expectInvalid(input: unknown) {
  const error = thrown(() => parsePrice(input as string));
  expect(error).toBeInstanceOf(X402Error);
  expect((error as X402Error).code).toBe('invalid_price');
  return error as X402Error;
}

describe('parsePrice', () => {
  it('parses a dollar string into atomic units', () => {
    expect(parsePrice('$0.001')).toBe(1000n);
    expect(parsePrice('$1')).toBe(1_000_000n);
    expect(parsePrice('$12.5')).toBe(12_500_000n);
  });

  it('parses a plain decimal string', () => {
    expect(parsePrice('0.001')).toBe(1000n);
    expect(parsePrice('0.000001')).toBe(1n);
    expect(parsePrice('  0.25 ')).toBe(250_000n);
  });

  it('parses JS numbers through their shortest decimal form', () => {
    expect(parsePrice(0.001)).toBe(1000n);
    expect(parsePrice(0.1)).toBe(100_000n);
    expect(parsePrice(1.1)).toBe(1_100_000n);
    expect(parsePrice(0.000001)).toBe(1n);
    expect(parsePrice(123456.789012)).toBe(123_456_789_012n);
  });

  it('is exact where floating point multiplication is not', () => {
    // the float route truncates these to one unit less
    expect(Math.floor(1.005 * 1e6)).toBe(1_004_999);
    expect(Math.floor(1.000001 * 1e6)).toBe(1_000_000);
    expect(parsePrice(1.005)).toBe(1_005_000n);
    expect(parsePrice(1.000001)).toBe(1_000_001n);
    expect(parsePrice(64.1)).toBe(64_100_000n);
  });

  it('rejects 0.1 + 0.2 instead of rounding it', () => {
    expect(expectInvalid(0.1 + 0.2).message).toContain('more than 6 decimals');
  });

  it('rejects a price with 7 decimals', () => {
    expect(expectInvalid('0.0000001').message).toContain('more than 6 decimals');
    expectInvalid('$1.0000001');
    expectInvalid(0.0000015);
  });

  it('accepts trailing zeros beyond 6 decimals because the value stays exact', () => {
    expect(parsePrice('1.0000000')).toBe(1_000_000n);
  });

  it('handles exponent notation exactly: 1e-3 is 0.001, 1e-7 is too fine', () => {
    expect(parsePrice('1e-3')).toBe(1000n);
    expect(parsePrice('$2.5E-2')).toBe(25_000n);
    expect(parsePrice(1e-6)).toBe(1n);
    expectInvalid(1e-7); // String(1e-7) === "1e-7"
    expectInvalid('1e-7');
    expectInvalid(1e21); // "1e+21", above the maximum
    expectInvalid('1e99999');
  });

  it('rejects thousands separators such as $1,000', () => {
    expectInvalid('$1,000');
    expectInvalid('1_000');
  });

  it('rejects zero and negative prices', () => {
    expect(expectInvalid('0').message).toContain('greater than zero');
    expectInvalid('$0.000000');
    expectInvalid(0);
    expectInvalid(-0);
    expectInvalid(-1);
    expectInvalid('-0.5');
    expectInvalid('$-1');
  });

  it('rejects empty input and garbage', () => {
    for (const input of ['', '   ', '$', 'abc', '$$1', '1.2.3', '.5', '5.', '0x10', '+1', '1 000', 'Infinity', 'NaN', '1e', '١']) {
      expectInvalid(input);
    }
  });

  it('rejects NaN, Infinity and non-string, non-number values', () => {
    for (const input of [NaN, Infinity, -Infinity, null, undefined, {}, [], 1n, true]) expectInvalid(input);
  });

  it('rejects a very long string without trying to parse it', () => {
    expectInvalid('1'.repeat(10_000));
  });

  it('accepts the maximum of 1,000,000 USDC and rejects one atomic unit more', () => {
    expect(parsePrice('1000000')).toBe(MAX_PRICE_ATOMIC);
    expect(parsePrice(1_000_000)).toBe(MAX_PRICE_ATOMIC);
    expect(expectInvalid('1000000.000001').message).toContain('maximum');
  });

  it('supports other token decimals', () => {
    expect(parsePrice('0.5', 18)).toBe(500_000_000_000_000_000n);
    expect(parsePrice('3', 0)).toBe(3n);
    expect(() => parsePrice('1', 1.5)).toThrow(X402Error);
  });
});

describe('formatPrice', () => {
  it('formats atomic units without and with a dollar sign', () => {
    expect(formatPrice(1000n)).toBe('0.001');
    expect(formatPriceUsd(1000n)).toBe('$0.001');
    expect(formatPrice(1_000_000n)).toBe('1');
    expect(formatPrice(12_500_000n)).toBe('12.5');
    expect(formatPrice(1n)).toBe('0.000001');
    expect(formatPrice(0n)).toBe('0');
  });

  it('round-trips every parsed price', () => {
    for (const text of ['0.001', '0.000001', '1', '12.5', '999999.999999', '1000000']) {
      expect(formatPrice(parsePrice(text))).toBe(text);
    }
  });

  it('rejects negative amounts with a typed error', () => {
    expect(thrown(() => formatPrice(-1n))).toBeInstanceOf(X402Error);
    expect(thrown(() => formatPrice(1 as unknown as bigint))).toBeInstanceOf(X402Error);
  });
});

describe('rescaleAtomic', () => {
  it('turns a listed micro-USDC price into the atomic units of a token of other decimals, exactly', () => {
    expect(rescaleAtomic(1000n, 6, 18)).toBe(10n ** 15n);
    expect(rescaleAtomic(10n ** 15n, 18, 6)).toBe(1000n);
    expect(rescaleAtomic(1000n, 6, 6)).toBe(1000n);
    expect(rescaleAtomic(1500n, 6, 3)).toBeUndefined();
    expect(rescaleAtomic(2000n, 6, 3)).toBe(2n);
  });

  it('answers undefined for an amount smaller than one unit of the coarser token, and refuses impossible decimals', () => {
    expect(rescaleAtomic(1n, 18, 6)).toBeUndefined();
    expect(thrown(() => rescaleAtomic(1n, 6, 37))).toBeInstanceOf(X402Error);
  });
});
