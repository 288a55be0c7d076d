/**
 * Prices: human decimal USDC amounts ("$0.001", "0.001", 0.001) <-> integer atomic units (bigint).
 * All arithmetic is on decimal digit strings and bigints; a float is only ever read through its
 * shortest round-trip decimal form `String(n)`, so 0.1 + 0.2 is rejected rather than rounded.
 */
import { X402Error } from './errors';

/**
 * Decimals of USDC on every supported network.
 *
 * @example
 * formatPrice(1_500_000n, USDC_DECIMALS); // '1.5'
 */
export const USDC_DECIMALS = 6;

/**
 * Highest accepted price in whole tokens (inclusive): 1,000,000 USDC.
 *
 * @example
 * parsePrice(`$${MAX_PRICE_UNITS}`); // 1000000000000n, the highest price accepted
 */
export const MAX_PRICE_UNITS = 1_000_000n;

/**
 * Highest accepted price in USDC atomic units (inclusive): 1,000,000 USDC = 10^12.
 *
 * @example
 * if (amount > MAX_PRICE_ATOMIC) throw new Error('price above 1,000,000 USDC');
 */
export const MAX_PRICE_ATOMIC = MAX_PRICE_UNITS * 10n ** BigInt(USDC_DECIMALS);

const MAX_INPUT_LENGTH = 64;
const MAX_EXPONENT = 64;
const DECIMAL = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d{1,4}))?$/;

function fail(input: unknown, reason: string): never {
  const shown = typeof input === 'string' ? JSON.stringify(input.slice(0, MAX_INPUT_LENGTH)) : String(input);
  throw new X402Error('invalid_price', `Invalid price ${shown}: ${reason}`);
}

function checkDecimals(decimals: number): bigint {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 36) {
    throw new X402Error('invalid_price', `Invalid token decimals ${decimals}: expected an integer 0..36`);
  }
  return 10n ** BigInt(decimals);
}

/**
 * An amount of `atomic` units of a token with `from` decimals, in units of one with `to` decimals:
 * exact, or undefined when it is not a whole number of the smaller unit. A listing's price is
 * micro-USDC (6 decimals) whatever token pays it; this is how it becomes the token's amount.
 *
 * @example
 * rescaleAtomic(1000n, 6, 18); // 1000000000000000n ($0.001 in an 18-decimal token)
 * rescaleAtomic(10n ** 15n, 18, 6); // 1000n
 * rescaleAtomic(1n, 18, 6); // undefined (less than one micro-USDC)
 */
export function rescaleAtomic(atomic: bigint, from: number, to: number): bigint | undefined {
  checkDecimals(from);
  checkDecimals(to);
  if (to >= from) return atomic * 10n ** BigInt(to - from);
  const divisor = 10n ** BigInt(from - to);
  return atomic % divisor === 0n ? atomic / divisor : undefined;
}

/**
 * Parses a price into integer atomic units, exactly.
 *
 * Accepts a string `"$0.001"` / `"0.001"` (optional single leading `$`, surrounding whitespace
 * ignored, exponent notation such as `"1e-3"` accepted when exact) or a finite JS number (read via
 * `String(n)`). Rejects with `X402Error("invalid_price")`: empty or garbage input, thousands
 * separators (`"$1,000"`), signs, zero, negatives, NaN/Infinity, values that are not a whole
 * number of atomic units (more than `decimals` decimals, e.g. `0.1 + 0.2`), and values above
 * `MAX_PRICE_UNITS` whole tokens.
 *
 * @param input - the price, in whole tokens (dollars for USDC)
 * @param decimals - token decimals, default 6 (USDC)
 * @returns atomic units, e.g. `parsePrice("$0.001") === 1000n`
 * @example
 * import { formatPriceUsd, parsePrice } from 'skill-market/x402';
 *
 * parsePrice('$0.001'); // 1000n (USDC has 6 decimals)
 * parsePrice('0.5', 18); // 500000000000000000n
 * formatPriceUsd(parsePrice('$0.25')); // '$0.25'
 */
export function parsePrice(input: string | number, decimals: number = USDC_DECIMALS): bigint {
  const scale = checkDecimals(decimals);
  let text: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) fail(input, 'not a finite number');
    text = String(input);
  } else if (typeof input === 'string') {
    if (input.length > MAX_INPUT_LENGTH) fail(input, 'too long');
    text = input.trim();
    if (text.startsWith('$')) text = text.slice(1);
  } else {
    fail(input, 'expected a string or a number');
  }
  if (text === '') fail(input, 'empty');
  if (text.startsWith('-')) fail(input, 'must be greater than zero');
  const match = DECIMAL.exec(text);
  if (!match) fail(input, 'expected a plain decimal amount such as 0.001');
  const [, whole = '', fraction = '', exponentText = '0'] = match;
  const exponent = Number(exponentText);
  if (Math.abs(exponent) > MAX_EXPONENT) fail(input, 'exponent out of range');

  // value = digits * 10^(shift - decimals) atomic units
  const digits = BigInt(whole + fraction);
  const shift = exponent - fraction.length + decimals;
  let atomic: bigint;
  if (shift >= 0) {
    atomic = digits * 10n ** BigInt(shift);
  } else {
    const divisor = 10n ** BigInt(-shift);
    if (digits % divisor !== 0n) fail(input, `more than ${decimals} decimals`);
    atomic = digits / divisor;
  }
  if (atomic === 0n) fail(input, 'must be greater than zero');
  if (atomic > MAX_PRICE_UNITS * scale) fail(input, `above the maximum of ${MAX_PRICE_UNITS} tokens`);
  return atomic;
}

/**
 * Formats atomic units as a plain decimal string without a dollar sign, trailing zeros removed.
 *
 * @example formatPrice(1000n) // "0.001"; formatPrice(2_500_000n) // "2.5"; formatPrice(0n) // "0"
 * @param atomic - non-negative amount in atomic units
 * @param decimals - token decimals, default 6 (USDC)
 */
export function formatPrice(atomic: bigint, decimals: number = USDC_DECIMALS): string {
  const scale = checkDecimals(decimals);
  if (typeof atomic !== 'bigint' || atomic < 0n) {
    throw new X402Error('invalid_price', `Cannot format ${String(atomic)}: expected a non-negative bigint`);
  }
  const whole = (atomic / scale).toString();
  const fraction = (atomic % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

/**
 * Formats atomic units as a dollar string, e.g. `formatPriceUsd(1000n) === "$0.001"`.
 *
 * @param atomic - non-negative amount in atomic units
 * @param decimals - token decimals, default 6 (USDC)
 *
 * @example
 * import { formatPriceUsd } from 'skill-market';
 *
 * formatPriceUsd(1000n); // '$0.001'
 * formatPriceUsd(BigInt(skill.priceMicroUsdc)); // a listing's price in micro-USDC, as '$0.25'
 */
export function formatPriceUsd(atomic: bigint, decimals: number = USDC_DECIMALS): string {
  return `$${formatPrice(atomic, decimals)}`;
}
