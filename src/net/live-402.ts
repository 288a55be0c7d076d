/**
 * What a paid HTTP resource asks now, read from its live 402: an unpaid request without a body
 * (`POST` unless told otherwise), its `PAYMENT-REQUIRED` header (x402 v2), else the JSON body's
 * `accepts` (v1 and v2 bodies), kept verbatim in the server's order, every scheme included. The
 * registry lists these for the servers it probes, the facilitator for the resources it catalogued.
 *
 * Guarded against SSRF: unless private addresses are allowed, the request goes to a public address
 * checked beforehand (the caller's, or the host resolved once here), pinned so that a second DNS
 * answer cannot lead it elsewhere; no redirect is followed; the body read is bounded; one deadline
 * covers the lookup and the read.
 */
import { parseGuardedJson, readLimited } from 'skill-market/http';
import { decodePaymentRequired, PAYMENT_REQUIRED_HEADER } from 'skill-market/x402';
import { checkHost, pinnedTarget, resolveWithDns, type PinnedTarget, type Resolve } from './address-guard';

/** Largest 402 body read for its `accepts`. */
const MAX_BODY = 64 * 1024;
/** Most offers one 402 may make to be kept (a longer list is not read as offers). */
const MAX_LIVE_OFFERS = 8;

export interface Live402Options {
  fetch: typeof fetch;
  /** Longest wait for the whole read (lookup, answer and body). */
  timeoutMs: number;
  /** Read resources on loopback, private and link-local addresses too (development and tests only). */
  allowPrivateAddresses: boolean;
  userAgent: string;
  /** Resolves the host when no checked `address` is given; default DNS. */
  resolve?: Resolve;
}

/** The request method; default `POST` (a paid skill's). */
export type Live402Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The offers of a live 402, or why there are none (for logs: a reason names no secret). */
export type Live402 = { type: 'offers'; accepts: Record<string, unknown>[] } | { type: 'none'; reason: string };

const none = (reason: string): Live402 => ({ type: 'none', reason });

/**
 * Reads the live 402 of `endpoint`. `address`: a public address of its host already checked (the
 * registry's health probe connected to it), used without resolving again; without it the host is
 * resolved and checked here. Never throws.
 */
export async function readLive402(
  endpoint: string,
  options: Live402Options,
  request: { method?: Live402Method; address?: string | undefined } = {},
): Promise<Live402> {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return none('not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return none('not an http(s) URL');
  const deadline = AbortSignal.timeout(options.timeoutMs);
  let target: PinnedTarget = { url, headers: {} };
  if (!options.allowPrivateAddresses) {
    let address = request.address;
    if (address === undefined) {
      const host = await Promise.race([checkHost(url.hostname, options.resolve ?? resolveWithDns), aborted(deadline)]);
      if (host === 'timeout') return none(`cannot resolve ${url.hostname}: no answer within ${options.timeoutMs} ms`);
      if (host.type !== 'public') return none(host.reason);
      address = host.address;
    }
    target = pinnedTarget(url, address);
  }
  try {
    const response = await options.fetch(target.url, {
      method: request.method ?? 'POST',
      redirect: 'manual',
      signal: deadline,
      headers: { 'user-agent': options.userAgent, accept: 'application/json', ...target.headers },
      ...(target.tls ? { tls: target.tls } : {}),
    });
    if (response.status !== 402) {
      await response.body?.cancel().catch(() => {});
      return none(`answered ${response.status}, not 402`);
    }
    const header = response.headers.get(PAYMENT_REQUIRED_HEADER);
    if (header) {
      await response.body?.cancel().catch(() => {});
      return kept(decodePaymentRequired(header).accepts);
    }
    const text = await readLimited(response.body, MAX_BODY);
    if (text === undefined) return none(`a 402 body over ${MAX_BODY} bytes`);
    const parsed = parseGuardedJson(text);
    return parsed.type === 'json' ? kept((parsed.value as { accepts?: unknown } | null)?.accepts) : none('a 402 body that is not JSON');
  } catch (error) {
    if (deadline.aborted) return none(`no answer within ${options.timeoutMs} ms`);
    return none(error instanceof Error ? error.message : String(error));
  }
}

function aborted(signal: AbortSignal): Promise<'timeout'> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve('timeout'), { once: true }));
}

/** At most {@link MAX_LIVE_OFFERS} objects that jsonb can hold (no NUL, no lone surrogate). */
function kept(accepts: unknown): Live402 {
  if (!Array.isArray(accepts) || accepts.length === 0) return none('a 402 without offers');
  if (accepts.length > MAX_LIVE_OFFERS) return none(`a 402 of over ${MAX_LIVE_OFFERS} offers`);
  if (!accepts.every((a) => typeof a === 'object' && a !== null && !Array.isArray(a))) return none('a 402 whose offers are not objects');
  const checked = parseGuardedJson(JSON.stringify(accepts));
  return checked.type === 'json' && !checked.nul && !checked.loneSurrogate
    ? { type: 'offers', accepts: accepts as Record<string, unknown>[] }
    : none('a 402 whose offers cannot be stored');
}
