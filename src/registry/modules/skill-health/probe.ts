import { checkHost, pinnedTarget, type PinnedTarget, type Resolve } from '../../lib/address-guard';

/** What one probe of a skill server found. */
export type ProbeOutcome =
  | { type: 'up'; latencyMs: number }
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

/**
 * `GET <server>/health`. Any HTTP answer below 500 counts as up: the server answers, and a server
 * of another SDK may have no /health route (404) while its skills work. A 5xx, a timeout or a
 * refused connection is down. Redirects are not followed (they could lead to a private address),
 * and the body is never read: only status and latency are kept. Unless private addresses are
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
    await response.body?.cancel().catch(() => {});
    return response.status < 500 ? { type: 'up', latencyMs } : { type: 'down', reason: `answered ${response.status}` };
  } catch (error) {
    if (deadline.aborted) return { type: 'down', reason: `no answer within ${options.timeoutMs} ms` };
    return { type: 'down', reason: error instanceof Error ? error.message : String(error) };
  }
}

function aborted(signal: AbortSignal): Promise<'timeout'> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve('timeout'), { once: true }));
}
