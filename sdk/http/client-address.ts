/**
 * The client's IP address behind trusted proxies: the socket peer, unless the peer is one of
 * `trustedProxies`; then the rightmost `X-Forwarded-For` entry that is not itself a trusted proxy
 * (entries left of it could be written by anyone). IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is the IPv4
 * address. Used by the registry (rate limits, views) and the skill server (free trial wallets per address).
 *
 * @example
 * clientAddress('10.0.0.2', '198.51.100.7, 10.0.0.3', ['10.0.0.2', '10.0.0.3']) // '198.51.100.7'
 * clientAddress('203.0.113.9', '198.51.100.7', ['10.0.0.2']) // '203.0.113.9': not a trusted proxy
 */
export function clientAddress(peer: string, forwardedFor: string | null | undefined, trustedProxies: readonly string[]): string {
  const address = plainAddress(peer);
  if (!trustedProxies.includes(address) || !forwardedFor) return address;
  const hops = forwardedFor
    .split(',')
    .map((hop) => plainAddress(hop.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!trustedProxies.includes(hop)) return hop;
  }
  return hops[0] ?? address;
}

/**
 * An IP address as written in lists of them: IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is the IPv4 address.
 *
 * @example plainAddress('::ffff:192.0.2.1') // '192.0.2.1'
 */
export function plainAddress(ip: string): string {
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}
