/**
 * What each skill of a server asks now, read from its live 402, for servers that do not report
 * their offers in /health (another SDK's, `@x402/hono`'s): an unpaid `POST <endpoint>` without a
 * body, its `PAYMENT-REQUIRED` header (x402 v2), else the JSON body's `accepts` (v1 and v2 bodies).
 * Discovery then lists what the server really asks (its payment window, every scheme it offers)
 * instead of defaults. Same guard as the health probe: the public address it checked and connected
 * to, pinned (no second lookup), unless private addresses are allowed; no redirect; a bounded read.
 */
import { parseGuardedJson, readLimited } from 'skill-market/http';
import { decodePaymentRequired, PAYMENT_REQUIRED_HEADER } from 'skill-market/x402';
import { pinnedTarget, type PinnedTarget } from '../../lib/address-guard';
import type { ProbeOptions } from './probe';

/** Largest 402 body read for its `accepts`. */
const MAX_BODY = 64 * 1024;
/** Most offers kept per skill. */
const MAX_OFFERS = 8;

/** `endpoint` → the last path segment, the skill's name on its server (how discovery finds its offers). */
const nameOf = (endpoint: string) => {
  try {
    return decodeURIComponent(new URL(endpoint).pathname.replace(/\/+$/, '').split('/').pop() ?? '');
  } catch {
    return '';
  }
};

/** The offers of one skill's live 402, or undefined when it answers no 402 with offers. */
async function offersAt(endpoint: string, options: ProbeOptions, address: string | undefined): Promise<unknown[] | undefined> {
  const url = new URL(endpoint);
  const deadline = AbortSignal.timeout(options.timeoutMs);
  let target: PinnedTarget = { url, headers: {} };
  if (!options.allowPrivateAddresses) {
    if (address === undefined) return undefined;
    target = pinnedTarget(url, address);
  }
  try {
    const response = await options.fetch(target.url, {
      method: 'POST',
      redirect: 'manual',
      signal: deadline,
      headers: { 'user-agent': options.userAgent, accept: 'application/json', ...target.headers },
      ...(target.tls ? { tls: target.tls } : {}),
    });
    if (response.status !== 402) {
      await response.body?.cancel().catch(() => {});
      return undefined;
    }
    const header = response.headers.get(PAYMENT_REQUIRED_HEADER);
    if (header) {
      await response.body?.cancel().catch(() => {});
      return keep(decodePaymentRequired(header).accepts);
    }
    const text = await readLimited(response.body, MAX_BODY);
    if (text === undefined) return undefined;
    const parsed = parseGuardedJson(text);
    return parsed.type === 'json' ? keep((parsed.value as { accepts?: unknown } | null)?.accepts) : undefined;
  } catch {
    return undefined;
  }
}

/** A list of at most {@link MAX_OFFERS} objects that jsonb can hold (no NUL, no lone surrogate), or undefined. */
function keep(accepts: unknown): unknown[] | undefined {
  if (!Array.isArray(accepts) || accepts.length === 0 || accepts.length > MAX_OFFERS) return undefined;
  if (!accepts.every((a) => typeof a === 'object' && a !== null && !Array.isArray(a))) return undefined;
  const checked = parseGuardedJson(JSON.stringify(accepts));
  return checked.type === 'json' && !checked.nul && !checked.loneSurrogate ? accepts : undefined;
}

/**
 * The live offers of these skill endpoints of one server, by skill name; one request at a time,
 * each to `address` (the one the health probe checked) unless private addresses are allowed.
 */
export async function liveOffers(
  endpoints: readonly string[],
  options: ProbeOptions,
  address: string | undefined,
): Promise<Record<string, unknown[]> | undefined> {
  const offers: Record<string, unknown[]> = {};
  for (const endpoint of endpoints) {
    const name = nameOf(endpoint);
    const found = name ? await offersAt(endpoint, options, address) : undefined;
    if (found) offers[name] = found;
  }
  return Object.keys(offers).length > 0 ? offers : undefined;
}
