/** Display helpers. Money stays exact: amounts are decimal strings or bigint atomic units. */
import { priceLabel } from 'skill-market/registry';
import { pageConfig } from './config';

/** USDC's decimals: the token's until the registry's page settings say otherwise. */
const USDC_DECIMALS = 6;

const integer = new Intl.NumberFormat('en-US');

export const count = (n: number) => integer.format(n);
/** A listing's rating in stars (0–5, from the stored 0–100 scores): "★ 4.3 (12)", or "No reviews". */
export const stars = (rating: number | null, reviews: number) =>
  rating === null ? 'No reviews' : `★ ${(Math.round(rating * 10) / 10).toFixed(1)} (${integer.format(reviews)})`;

/**
 * `$0.001` from the registry's dollar string, or from atomic units of the registry's token (its
 * decimals from the page settings, `asset.decimals`).
 */
export function usdc(value: string | bigint): string {
  if (typeof value === 'string') return value.startsWith('$') ? value : `$${value}`;
  const decimals = pageConfig.value?.asset.decimals ?? USDC_DECIMALS;
  const scale = 10n ** BigInt(decimals);
  const whole = value / scale;
  const fraction = (value % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
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

/** A moment to the minute with its time zone, e.g. `Nov 30, 01:00 GMT+1`: when something comes back. */
export function moment(ms: number): string {
  return new Date(ms).toLocaleString('en-US', {
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hour12: false,
    timeZoneName: 'short',
  });
}

/** A share 0–1 as "99.9 %" (one decimal, never rounded up to 100 unless it is), or "—" when not known yet. */
export function uptime(share: number | null | undefined): string {
  if (share == null) return '—';
  const tenths = Math.floor(share * 1000) / 10;
  return `${tenths.toFixed(1)} %`;
}

/** A listing's free trial for people: "2 free calls a day per wallet". */
export function trialText(trial: { calls: number; period: string } | null | undefined): string | undefined {
  if (!trial) return undefined;
  return `${integer.format(trial.calls)} free call${trial.calls === 1 ? '' : 's'} a ${trial.period} per wallet`;
}

/**
 * A listing's price in USDC with its volume prices: "$0.001 USDC, $0.0008 after 1,000 calls a
 * month"; a usage-based one's prices are the most a call costs: "up to $0.01 USDC, $0.008 after
 * 100 calls a month" (where it is shown says "by use").
 */
export function priceWithTiers(listing: {
  price: string;
  usageBased?: boolean | undefined;
  tiers?: { period: string; steps: { after: number; price: string }[] } | null | undefined;
}): string {
  const { tiers } = listing;
  const base = `${priceLabel({ price: usdc(listing.price), usageBased: listing.usageBased })} USDC`;
  const steps = (tiers?.steps ?? []).map((step) => `${usdc(step.price)} after ${integer.format(step.after)} calls a ${tiers!.period}`);
  return [base, ...steps].join(', ');
}
