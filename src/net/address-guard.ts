import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Resolves a host name to every address it has (an IP literal resolves to itself). */
export type Resolve = (hostname: string) => Promise<string[]>;

export const resolveWithDns: Resolve = async (hostname) => {
  if (isIP(hostname)) return [hostname];
  return (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
};

/**
 * IPv4 addresses no public skill server has: loopback, private, shared (CGNAT), link-local (cloud
 * metadata lives at 169.254.169.254), the 6to4 relay anycast, documentation, benchmarking,
 * multicast, reserved and unspecified ranges.
 */
const nonPublicIpv4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublicIpv4.addSubnet(network, prefix, 'ipv4');
}

/** An IPv6 prefix as the top `bits` bits of the 128-bit value. */
const prefix = (address: string, bits: number) => ({ value: ipv6Value(address)!, bits });
const within = (value: bigint, p: { value: bigint; bits: number }) => value >> BigInt(128 - p.bits) === p.value >> BigInt(128 - p.bits);

/** Forms that carry an IPv4 address in their last 32 bits: they reach that address, so it decides. */
const EMBEDDING_LAST_32 = [
  prefix('::ffff:0:0', 96), // IPv4-mapped
  prefix('::ffff:0:0:0', 96), // IPv4-translated (SIIT)
  prefix('64:ff9b::', 96), // NAT64, well-known prefix
];
/** 6to4: the IPv4 address of the tunnel's end sits in bits 16–47. */
const SIX_TO_FOUR = prefix('2002::', 16);
/** Global unicast: the only IPv6 space a public server has (all else is loopback, unspecified, IPv4-compatible, ULA, link- or site-local, multicast, discard, NAT64 local-use, SRv6 or unassigned). */
const GLOBAL_UNICAST = prefix('2000::', 3);
/** Inside global unicast yet not a public server: IETF protocol assignments (Teredo among them) and documentation. */
const SPECIAL_GLOBAL = [prefix('2001::', 23), prefix('2001:db8::', 32), prefix('3fff::', 20)];

/**
 * Whether a skill server at `address` may be probed: a public IPv4 address, or an IPv6 address in
 * global unicast space outside its special ranges. IPv6 forms that lead to an IPv4 address (mapped,
 * translated, NAT64, 6to4) are judged by that address; deprecated IPv4-compatible ones (`::7f00:1`)
 * and scoped ones (`fe80::1%eth0`) are refused.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !nonPublicIpv4.check(address, 'ipv4');
  if (family !== 6 || address.includes('%')) return false;
  const value = ipv6Value(address);
  if (value === undefined) return false;
  if (EMBEDDING_LAST_32.some((p) => within(value, p))) return isPublicIpv4(value & 0xffff_ffffn);
  if (within(value, SIX_TO_FOUR)) return isPublicIpv4((value >> 80n) & 0xffff_ffffn);
  return within(value, GLOBAL_UNICAST) && !SPECIAL_GLOBAL.some((p) => within(value, p));
}

function isPublicIpv4(value: bigint): boolean {
  const octets = [24n, 16n, 8n, 0n].map((shift) => (value >> shift) & 0xffn);
  return isPublicAddress(octets.join('.'));
}

/** The 128-bit value of an IPv6 address (`::`, a dotted IPv4 tail and any case accepted), or undefined. */
function ipv6Value(address: string): bigint | undefined {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const groups = halves.length === 2 ? [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail] : head;
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return groups.reduce((value, group) => (value << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
}

export type HostCheck = { type: 'public'; address: string } | { type: 'refused'; reason: string } | { type: 'unresolved'; reason: string };

/**
 * Whether a host may be probed, and the address to connect to: every address it resolves to must
 * be public (a name resolving to one public and one private address could be connected to either),
 * and the probe then connects to the first of them, never resolving the name again (a second
 * answer could be another address: DNS rebinding). A name that does not resolve is not probed
 * either; the server counts as down.
 */
export async function checkHost(hostname: string, resolve: Resolve): Promise<HostCheck> {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  let addresses: string[];
  try {
    addresses = await resolve(bare);
  } catch (error) {
    return { type: 'unresolved', reason: `cannot resolve ${hostname}: ${error instanceof Error ? error.message : String(error)}` };
  }
  const [first] = addresses;
  if (first === undefined) return { type: 'unresolved', reason: `cannot resolve ${hostname}` };
  const blocked = addresses.find((a) => !isPublicAddress(a));
  return blocked === undefined
    ? { type: 'public', address: first }
    : { type: 'refused', reason: `refused: ${hostname} resolves to the non-public address ${blocked}` };
}

export interface PinnedTarget {
  /** `url` with the host replaced by the address to connect to. */
  url: URL;
  /** `host`: the URL's own host (and port), which the server routes by. */
  headers: { host?: string };
  /** The name to send in TLS (SNI) and to verify the certificate against. */
  tls?: { serverName: string };
}

/** A request for `url` that connects to `address` (already checked) and still names the URL's host. */
export function pinnedTarget(url: URL, address: string): PinnedTarget {
  const pinned = new URL(url);
  pinned.hostname = address.includes(':') ? `[${address}]` : address;
  const named = isIP(url.hostname.replace(/^\[|\]$/g, '')) === 0;
  return {
    url: pinned,
    headers: { host: url.host },
    ...(named && url.protocol === 'https:' ? { tls: { serverName: url.hostname } } : {}),
  };
}
