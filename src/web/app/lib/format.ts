/** Display helpers. Money stays exact: amounts are decimal strings or bigint micro-USDC. */

const integer = new Intl.NumberFormat('en-US');

export const count = (n: number) => integer.format(n);
/** A listing's rating in stars (0–5, from the stored 0–100 scores): "★ 4.3 (12)", or "No reviews". */
export const stars = (rating: number | null, reviews: number) =>
  rating === null ? 'No reviews' : `★ ${(Math.round(rating * 10) / 10).toFixed(1)} (${integer.format(reviews)})`;

/** `$0.001` from the registry's dollar string, or from micro-USDC. */
export function usdc(value: string | bigint): string {
  if (typeof value === 'string') return value.startsWith('$') ? value : `$${value}`;
  const whole = value / 1_000_000n;
  const fraction = (value % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `$${integer.format(whole)}${fraction ? `.${fraction}` : ''}`;
}

/** `0x1234…abcd` for display; the full address stays in the title and links. */
export const shortAddress = (address: string) => (address.length > 12 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address);

export function date(iso: string): string {
  return new Date(iso).toLocaleDateString('en-US', { year: 'numeric', month: 'short', day: 'numeric' });
}

/** A moment to the second, e.g. `Nov 26, 2026, 06:01:12`: for logs where several fall on one day. */
export function dateTime(iso: string): string {
  return new Date(iso).toLocaleString('en-US', {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  });
}
