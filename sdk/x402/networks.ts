/**
 * Networks and assets: CAIP-2 ids (`eip155:<chainId>`), the v1 names of the two Base networks,
 * and the USDC contract (with its EIP-712 domain) each network pays in.
 */
import { getAddress } from 'viem';
import { X402Error } from './errors';
import { USDC_DECIMALS } from './price';
import { ADDRESS_PATTERN, type Address } from './patterns';

/** A CAIP-2 network id in the eip155 namespace, e.g. `eip155:8453`. */
export type Caip2Network = `eip155:${string}`;

/** A token an `exact` payment moves, with the EIP-712 domain its EIP-3009 signatures use. */
export interface AssetInfo {
  /** ERC-20 contract address (the EIP-712 `verifyingContract`). */
  address: Address;
  /** EIP-712 domain name, e.g. `USD Coin`. */
  name: string;
  /** EIP-712 domain version, e.g. `2`. */
  version: string;
  /** Token decimals, 6 for USDC. */
  decimals: number;
}

/** A network this module knows out of the box. */
export interface KnownNetwork {
  network: Caip2Network;
  chainId: number;
  /** Network name used by x402 v1 payloads. */
  v1Name: string;
  usdc: AssetInfo;
}

/**
 * Base mainnet and its USDC.
 *
 * @example
 * BASE_MAINNET.network; // 'eip155:8453'
 * BASE_MAINNET.usdc.address; // '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
 */
export const BASE_MAINNET: KnownNetwork = Object.freeze({
  network: 'eip155:8453',
  chainId: 8453,
  v1Name: 'base',
  usdc: Object.freeze({
    address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    name: 'USD Coin',
    version: '2',
    decimals: USDC_DECIMALS,
  }),
});

/**
 * Base Sepolia and its USDC.
 *
 * @example
 * const market = new SkillMarket({ apiUrl, wallet, network: BASE_SEPOLIA.network }); // test money
 */
export const BASE_SEPOLIA: KnownNetwork = Object.freeze({
  network: 'eip155:84532',
  chainId: 84532,
  v1Name: 'base-sepolia',
  usdc: Object.freeze({
    address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    name: 'USDC',
    version: '2',
    decimals: USDC_DECIMALS,
  }),
});

/**
 * Every network with a built-in USDC.
 *
 * @example
 * KNOWN_NETWORKS.map((n) => n.v1Name); // ['base', 'base-sepolia']
 */
export const KNOWN_NETWORKS: readonly KnownNetwork[] = Object.freeze([BASE_MAINNET, BASE_SEPOLIA]);

/**
 * The marketplace's default payment network (Base mainnet).
 *
 * @example
 * buildPaymentTerms({ amount: 1000n, payTo, resourceUrl }).requirements.network === DEFAULT_NETWORK; // true: 'eip155:8453'
 */
export const DEFAULT_NETWORK: Caip2Network = BASE_MAINNET.network;

const CAIP2_EIP155 = /^eip155:([1-9][0-9]{0,15})$/;

/**
 * Parses a CAIP-2 eip155 id into its chain id.
 *
 * @example parseCaip2("eip155:8453") // 8453
 * @throws X402Error("invalid_network") for anything but `eip155:<positive safe integer>`
 */
export function parseCaip2(network: string): number {
  const match = typeof network === 'string' ? CAIP2_EIP155.exec(network) : null;
  const chainId = match?.[1] === undefined ? NaN : Number(match[1]);
  if (!Number.isSafeInteger(chainId)) {
    throw new X402Error('invalid_network', `Invalid network ${describe(network)}: expected eip155:<chainId>`);
  }
  return chainId;
}

/**
 * True when `network` is a valid CAIP-2 eip155 id.
 *
 * @example
 * isCaip2Network('eip155:84532'); // true
 * isCaip2Network('base-sepolia'); // false: a v1 name, see normalizeNetwork
 */
export function isCaip2Network(network: unknown): network is Caip2Network {
  return typeof network === 'string' && CAIP2_EIP155.test(network) && Number.isSafeInteger(Number(network.slice(7)));
}

/**
 * Builds `eip155:<chainId>`; throws X402Error("invalid_network") for a non-positive or unsafe id.
 *
 * @example
 * toCaip2(31337); // 'eip155:31337' (a local anvil chain)
 */
export function toCaip2(chainId: number): Caip2Network {
  if (!Number.isSafeInteger(chainId) || chainId <= 0) {
    throw new X402Error('invalid_network', `Invalid chain id ${String(chainId)}`);
  }
  return `eip155:${chainId}`;
}

/**
 * Normalizes a network given as CAIP-2 (`eip155:84532`) or as a v1 name (`base-sepolia`) to CAIP-2.
 *
 * @throws X402Error("invalid_network") for unknown v1 names and malformed ids
 *
 * @example
 * normalizeNetwork('base-sepolia'); // 'eip155:84532'
 * normalizeNetwork('eip155:8453'); // 'eip155:8453'
 */
export function normalizeNetwork(network: string): Caip2Network {
  const known = KNOWN_NETWORKS.find((n) => n.v1Name === network);
  if (known) return known.network;
  parseCaip2(network);
  return network as Caip2Network;
}

/**
 * The v1 name of a CAIP-2 network (`eip155:8453` → `base`), or undefined when it has none.
 *
 * @example
 * toV1Name('eip155:8453'); // 'base'
 * toV1Name('eip155:31337'); // undefined
 */
export function toV1Name(network: string): string | undefined {
  return KNOWN_NETWORKS.find((n) => n.network === network)?.v1Name;
}

/**
 * The built-in description of a network (CAIP-2 or v1 name), or undefined.
 *
 * @example
 * getKnownNetwork('base')?.chainId; // 8453
 * getKnownNetwork('eip155:84532')?.usdc.name; // 'USDC'
 */
export function getKnownNetwork(network: string): KnownNetwork | undefined {
  return KNOWN_NETWORKS.find((n) => n.network === network || n.v1Name === network);
}

/**
 * Validates a caller-supplied asset and returns it with a checksummed address.
 *
 * @throws X402Error("invalid_asset") naming the bad field
 *
 * @example
 * const token = validateAsset({ address: '0x5fbdb2315678afecb367f032d93f642f64180aa3', name: 'USD Coin', version: '2', decimals: 6 });
 * token.address; // '0x5FbDB2315678afecb367f032d93F642f64180aa3' (checksummed)
 */
export function validateAsset(asset: AssetInfo): AssetInfo {
  const bad = (field: string): never => {
    throw new X402Error('invalid_asset', `Invalid asset: ${field}`);
  };
  if (typeof asset !== 'object' || asset === null) bad('expected an object');
  if (typeof asset.address !== 'string' || !ADDRESS_PATTERN.test(asset.address)) bad('address must be 0x + 40 hex');
  if (typeof asset.name !== 'string' || asset.name === '' || asset.name.length > 128) bad('name must be a non-empty string');
  if (typeof asset.version !== 'string' || asset.version === '' || asset.version.length > 32) bad('version must be a non-empty string');
  if (!Number.isInteger(asset.decimals) || asset.decimals < 0 || asset.decimals > 36) bad('decimals must be an integer 0..36');
  return {
    address: getAddress(asset.address.toLowerCase()),
    name: asset.name,
    version: asset.version,
    decimals: asset.decimals,
  };
}

/**
 * The asset payments on `network` use: the caller's `custom` asset when given (any eip155 chain,
 * e.g. a local anvil token), otherwise the network's built-in USDC.
 *
 * @throws X402Error("invalid_network") when the network is malformed or has no built-in USDC and
 *   no custom asset was supplied; X402Error("invalid_asset") when `custom` is invalid
 *
 * @example
 * resolveAsset('base').address; // Base's USDC
 * resolveAsset('eip155:31337', { address: token, name: 'USD Coin', version: '2', decimals: 6 }); // a local token
 */
export function resolveAsset(network: string, custom?: AssetInfo): AssetInfo {
  const caip2 = normalizeNetwork(network);
  if (custom !== undefined) return validateAsset(custom);
  const known = getKnownNetwork(caip2);
  if (!known) {
    throw new X402Error('invalid_network', `No built-in USDC on ${caip2}: supply the asset (address, name, version, decimals)`);
  }
  return { ...known.usdc };
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 64)) : String(value);
}
