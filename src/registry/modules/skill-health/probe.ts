import { parseGuardedJson, readLimited } from 'skill-market/http';
import { checkHost, pinnedTarget, type PinnedTarget, type Resolve } from '../../../net';

/** What one probe of a skill server found. */
export type ProbeOutcome =
  /** `offers`: what each skill's 402 asks, by skill name (a skill server of ours says so in its /health). */
  /** `address`: the public address checked and connected to (when private addresses are not allowed), for later requests to pin. */
  | { type: 'up'; latencyMs: number; offers?: ReportedOffers; address?: string }
  | { type: 'down'; reason: string }
  /** Not probed: the server's host is not a public address (SSRF guard). */
  | { type: 'refused'; reason: string };

export interface ProbeOptions {
  fetch: typeof fetch;
  resolve: Resolve;
  timeoutMs: number;
  allowPrivateAddresses: boolean;
  userAgent: string;
}

/** A skill server's `accepts` by skill name, as its /health reports them (checked against each listing before use). */
type ReportedOffers = Record<string, unknown[]>;

/** Largest /health body read; a longer one is not read for offers (the server still counts as up). */
const MAX_HEALTH_BODY = 256 * 1024;

/**
 * `GET <server>/health`. Any HTTP answer below 500 counts as up: the server answers, and a server
 * of another SDK may have no /health route (404) while its skills work. A 5xx, a timeout or a
 * refused connection is down. Redirects are not followed (they could lead to a private address).
 * Of the body only a 200's JSON `accepts` is kept (at most 256 KiB read): the offers of each skill's
 * 402, which discovery lists once checked against the listing. Unless private addresses are
 * allowed, the host is resolved once, checked, and the request goes to the address checked
 * (keeping the name in the Host header and as the TLS server name), so a second DNS answer cannot
 * lead it elsewhere.
 */
export async function probeServer(serverUrl: string, options: ProbeOptions): Promise<ProbeOutcome> {
  const url = new URL(`${serverUrl}/health`);
  const deadline = AbortSignal.timeout(options.timeoutMs);
  let target: PinnedTarget = { url, headers: {} };
  if (!options.allowPrivateAddresses) {
    const host = await Promise.race([checkHost(url.hostname, options.resolve), aborted(deadline)]);
    if (host === 'timeout') return { type: 'down', reason: `cannot resolve ${url.hostname}: no answer within ${options.timeoutMs} ms` };
    if (host.type === 'refused') return { type: 'refused', reason: host.reason };
    if (host.type === 'unresolved') return { type: 'down', reason: host.reason };
    target = pinnedTarget(url, host.address);
  }
  const started = performance.now();
  try {
    const response = await options.fetch(target.url, {
      method: 'GET',
      redirect: 'manual',
      signal: deadline,
      headers: { 'user-agent': options.userAgent, accept: 'application/json', ...target.headers },
      ...(target.tls ? { tls: target.tls } : {}),
    });
    const latencyMs = Math.max(0, Math.round(performance.now() - started));
    if (response.status >= 500) {
      await response.body?.cancel().catch(() => {});
      return { type: 'down', reason: `answered ${response.status}` };
    }
    const offers = response.status === 200 ? await offersOf(response) : undefined;
    await response.body?.cancel().catch(() => {});
    const pinned = target.url === url ? {} : { address: target.url.hostname.replace(/^\[|\]$/g, '') };
    return offers ? { type: 'up', latencyMs, offers, ...pinned } : { type: 'up', latencyMs, ...pinned };
  } catch (error) {
    if (deadline.aborted) return { type: 'down', reason: `no answer within ${options.timeoutMs} ms` };
    return { type: 'down', reason: error instanceof Error ? error.message : String(error) };
  }
}

function aborted(signal: AbortSignal): Promise<'timeout'> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve('timeout'), { once: true }));
}

/** The `accepts` of a /health answer: skill names to arrays of objects; undefined when absent or malformed. */
async function offersOf(response: Response): Promise<ReportedOffers | undefined> {
  if (!(response.headers.get('content-type') ?? '').includes('json')) return undefined;
  const text = await readLimited(response.body, MAX_HEALTH_BODY).catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = parseGuardedJson(text);
  // jsonb holds no NUL and no lone surrogate.
  if (parsed.type !== 'json' || parsed.nul || parsed.loneSurrogate) return undefined;
  const accepts = (parsed.value as { accepts?: unknown } | null)?.accepts;
  if (typeof accepts !== 'object' || accepts === null || Array.isArray(accepts)) return undefined;
  const offers: ReportedOffers = {};
  for (const [name, list] of Object.entries(accepts)) {
    if (Array.isArray(list) && list.length <= 8 && list.every((a) => typeof a === 'object' && a !== null)) offers[name] = list;
  }
  return offers;
}
