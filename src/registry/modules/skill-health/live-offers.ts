/**
 * What each skill of a server asks now, read from its live 402 (src/net/live-402.ts), for servers
 * that do not report their offers in /health (another SDK's, `@x402/hono`'s). Discovery then lists
 * what the server really asks (its payment window, every scheme it offers) instead of defaults.
 * Each request goes to the public address the health probe checked and connected to, unless
 * private addresses are allowed.
 */
import { readLive402 } from '../../../net';
import type { ProbeOptions } from './probe';

/** `endpoint` → the last path segment, the skill's name on its server (how discovery finds its offers). */
const nameOf = (endpoint: string) => {
  try {
    return decodeURIComponent(new URL(endpoint).pathname.replace(/\/+$/, '').split('/').pop() ?? '');
  } catch {
    return '';
  }
};

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
    // Without a checked address (the probe found none) nothing is read: no second lookup here.
    if (!name || (!options.allowPrivateAddresses && address === undefined)) continue;
    const live = await readLive402(endpoint, options, { address });
    if (live.type === 'offers') offers[name] = live.accepts;
  }
  return Object.keys(offers).length > 0 ? offers : undefined;
}
