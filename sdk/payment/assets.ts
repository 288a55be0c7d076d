/**
 * Which tokens the client pays in: each known network's USDC, plus assets the caller allowed
 * explicitly (a test token on a local chain, say). Listings are priced in micro-USDC (6
 * decimals); the amount due in an asset of other decimals is scaled exactly or refused.
 */
import { getAddress, type Address } from 'viem';
import { getKnownNetwork, normalizeNetwork, rescaleAtomic, USDC_DECIMALS, type Caip2Network } from '../x402/index';
import type { AllowedAsset } from './types';
import { ADDRESS_PATTERN } from '../x402/patterns';

/** Decimals of listing prices (micro-USDC). */
const LISTING_DECIMALS = USDC_DECIMALS;

/** An asset the client accepts on one network. Without name/version, the server's EIP-712 domain is used. */
export interface AcceptedAsset {
  network: Caip2Network;
  address: Address;
  name: string | undefined;
  version: string | undefined;
  decimals: number;
}

/**
 * Validates the `assets` option once, at construction.
 *
 * @example
 * const allowed = readAllowedAssets([{ network: 'eip155:31337', address: token, name: 'USD Coin', version: '2' }]);
 * const policy = { allowed, maxTimeoutSeconds: 600 }; // a TermsPolicy for chooseTerms
 */
export function readAllowedAssets(assets: AllowedAsset[] | undefined): AcceptedAsset[] {
  if (assets === undefined) return [];
  if (!Array.isArray(assets))
    throw new TypeError('SkillMarket: assets must be an array of { network, address, name?, version?, decimals? }');
  return assets.map((asset, i) => {
    const where = `SkillMarket: assets[${i}]`;
    if (typeof asset !== 'object' || asset === null) throw new TypeError(`${where} must be an object`);
    let network: Caip2Network;
    try {
      network = normalizeNetwork(asset.network);
    } catch {
      throw new TypeError(`${where}.network must be a CAIP-2 id such as eip155:8453`);
    }
    if (typeof asset.address !== 'string' || !ADDRESS_PATTERN.test(asset.address))
      throw new TypeError(`${where}.address must be 0x + 40 hex`);
    const decimals = asset.decimals ?? LISTING_DECIMALS;
    if (!Number.isInteger(decimals) || decimals < 0 || decimals > 36) throw new TypeError(`${where}.decimals must be an integer 0..36`);
    for (const field of ['name', 'version'] as const) {
      const value = asset[field];
      if (value !== undefined && (typeof value !== 'string' || value === ''))
        throw new TypeError(`${where}.${field} must be a non-empty string`);
    }
    return { network, address: getAddress(asset.address.toLowerCase()), name: asset.name, version: asset.version, decimals };
  });
}

/** The accepted asset at `address` on `network`, or undefined when the client does not pay in it. */
export function acceptedAsset(allowed: readonly AcceptedAsset[], network: Caip2Network, address: string): AcceptedAsset | undefined {
  const lower = address.toLowerCase();
  const explicit = allowed.find((a) => a.network === network && a.address.toLowerCase() === lower);
  if (explicit) return explicit;
  const usdc = getKnownNetwork(network)?.usdc;
  if (usdc && usdc.address.toLowerCase() === lower) return { network, ...usdc };
  return undefined;
}

/** The asset a listing on `network` is paid in without asking (fast mode): an explicit one first, else USDC. */
export function defaultAsset(allowed: readonly AcceptedAsset[], network: Caip2Network): AcceptedAsset | undefined {
  const explicit = allowed.find((a) => a.network === network);
  if (explicit) return explicit;
  const usdc = getKnownNetwork(network)?.usdc;
  return usdc ? { network, ...usdc } : undefined;
}

/** The listing's micro-USDC price in atomic units of `asset`, or undefined when not exact. */
export function amountIn(asset: AcceptedAsset, priceMicro: bigint): bigint | undefined {
  return rescaleAtomic(priceMicro, LISTING_DECIMALS, asset.decimals);
}
