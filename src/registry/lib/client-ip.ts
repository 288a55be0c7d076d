import type { Server } from 'bun';

/**
 * The client's IP address. The socket peer, unless the peer is a trusted proxy: then the
 * rightmost X-Forwarded-For entry that is not itself a trusted proxy. A request handled in
 * process (tests, no socket) counts as coming from 127.0.0.1.
 */
export function clientIp(request: Request, server: Server<unknown> | null, trustedProxies: readonly string[]): string {
  const peer = peerIp(request, server);
  if (!trustedProxies.includes(peer)) return peer;
  const forwarded = request.headers.get('x-forwarded-for');
  if (!forwarded) return peer;
  const hops = forwarded
    .split(',')
    .map((h) => normalize(h.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!trustedProxies.includes(hop)) return hop;
  }
  return hops[0] ?? peer;
}

/** The socket peer's address (a proxy's, behind one); 127.0.0.1 for a request handled in process. */
export function peerIp(request: Request, server: Server<unknown> | null): string {
  return normalize(server?.requestIP(request)?.address ?? '127.0.0.1');
}

/** IPv4-mapped IPv6 (::ffff:1.2.3.4) is the IPv4 address. */
function normalize(ip: string): string {
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}
