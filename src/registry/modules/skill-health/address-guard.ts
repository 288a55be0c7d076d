import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Resolves a host name to every address it has (an IP literal resolves to itself). */
export type Resolve = (hostname: string) => Promise<string[]>;

export const resolveWithDns: Resolve = async (hostname) => {
  if (isIP(hostname)) return [hostname];
  return (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
};

/**
 * Addresses no public skill server has: loopback, private, shared (CGNAT), link-local (cloud
 * metadata lives at 169.254.169.254), multicast, reserved and unspecified ranges. IPv4-mapped IPv6
 * addresses are checked as the IPv4 address they carry.
 */
const nonPublic = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !nonPublic.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export type HostCheck = { type: 'public' } | { type: 'refused'; reason: string } | { type: 'unresolved'; reason: string };

/**
 * Whether a host may be probed: every address it resolves to must be public (a name resolving to
 * one public and one private address could be connected to either). A name that does not resolve
 * is not probed either; the server counts as down.
 */
export async function checkHost(hostname: string, resolve: Resolve): Promise<HostCheck> {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  let addresses: string[];
  try {
    addresses = await resolve(bare);
  } catch (error) {
    return { type: 'unresolved', reason: `cannot resolve ${hostname}: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (addresses.length === 0) return { type: 'unresolved', reason: `cannot resolve ${hostname}` };
  const blocked = addresses.find((a) => !isPublicAddress(a));
  return blocked === undefined
    ? { type: 'public' }
    : { type: 'refused', reason: `refused: ${hostname} resolves to the non-public address ${blocked}` };
}
