/**
 * An atomic amount as text with all of its token's decimals, exact (a bigint never goes through a
 * float): what balances and the revenue CSV show, so columns line up.
 *
 * @example
 * fixedDecimals(10_500_000n, 6); // '10.500000'
 * fixedDecimals(10n ** 15n, 18); // '0.001000000000000000'
 */
export function fixedDecimals(atomic: bigint, decimals: number): string {
  if (decimals === 0) return atomic.toString();
  const scale = 10n ** BigInt(decimals);
  return `${atomic / scale}.${(atomic % scale).toString().padStart(decimals, '0')}`;
}

/** The larger of two amounts (Math.max takes no bigint). */
export function larger(a: bigint, b: bigint): bigint {
  if (a > b) return a;
  return b;
}
