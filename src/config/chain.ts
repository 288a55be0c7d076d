import { getAddress, type Address } from 'viem';
import {
  ADDRESS_PATTERN,
  DEFAULT_NETWORK,
  getKnownNetwork,
  USDC_DECIMALS,
  isCaip2Network,
  normalizeNetwork,
  type Caip2Network,
} from 'skill-market/x402';
import { ConfigError, type Env, read, readHttpUrl, readInteger } from './env';

/** The chain the registry reads spending-wallet balances from. */
export interface ChainConfig {
  /** CAIP-2 network id, e.g. `eip155:8453`. */
  network: Caip2Network;
  /** The USDC (or test token) contract balances are read from, checksummed. */
  usdcAddress: Address;
  /**
   * Decimals of that token (MARKET_USDC_DECIMALS; default the network's USDC's, 6): the one place
   * the registry reads them from to turn listing prices into the token's atomic units and
   * atomic amounts into text.
   */
  usdcDecimals: number;
  /** JSON-RPC endpoint balances are read through. */
  rpcUrl: string;
  /** Longest wait for one RPC answer before the balance is reported unavailable. */
  rpcTimeoutMs: number;
  /** How long a balance read is reused, so a burst of requests costs one RPC call. */
  balanceCacheMs: number;
  /**
   * The first block payment-channel events (x402BatchSettlement's `ChannelCreated`, `Claimed`,
   * `Settled`) are read from: at or before the contract's deployment, so none is missed.
   */
  channelsFromBlock: bigint;
}

/** Public RPC endpoints of the networks with a built-in default. */
export const PUBLIC_RPC_URLS: Readonly<Record<string, string>> = {
  'eip155:8453': 'https://mainnet.base.org',
  'eip155:84532': 'https://sepolia.base.org',
};

const CHAIN_DEFAULTS = {
  network: DEFAULT_NETWORK,
  rpcTimeoutMs: 3000,
  balanceCacheMs: 5000,
  /**
   * Block 0: x402BatchSettlement's deployment block is not among the built-in defaults; `market
   * doctor` finds it on a node that serves past state (docs/operators.md, going live).
   */
  channelsFromBlock: 0,
} as const;

/**
 * MARKET_NETWORK, MARKET_USDC_ADDRESS, MARKET_USDC_DECIMALS, MARKET_RPC_URL, MARKET_RPC_TIMEOUT_MS,
 * MARKET_BALANCE_CACHE_MS and MARKET_CHANNELS_FROM_BLOCK. A network without built-in defaults
 * needs the token and the RPC set.
 */
export function readChainConfig(env: Env): ChainConfig {
  const network = readNetwork(env, 'MARKET_NETWORK');
  return {
    network,
    usdcAddress: readUsdc(env, network),
    usdcDecimals: readInteger(env, 'MARKET_USDC_DECIMALS', getKnownNetwork(network)?.usdc.decimals ?? USDC_DECIMALS, 0, 36),
    rpcUrl: readRpcUrl(env, 'MARKET_RPC_URL', network),
    rpcTimeoutMs: readInteger(env, 'MARKET_RPC_TIMEOUT_MS', CHAIN_DEFAULTS.rpcTimeoutMs, 100, 60_000),
    balanceCacheMs: readInteger(env, 'MARKET_BALANCE_CACHE_MS', CHAIN_DEFAULTS.balanceCacheMs, 0, 600_000),
    channelsFromBlock: readChannelsFromBlock(env),
  };
}

/**
 * MARKET_CHANNELS_FROM_BLOCK: the first block payment-channel events are read from (default 0;
 * `market doctor` says when 0 is too early on the network, and which block to set).
 */
export function readChannelsFromBlock(env: Env): bigint {
  return BigInt(readInteger(env, 'MARKET_CHANNELS_FROM_BLOCK', CHAIN_DEFAULTS.channelsFromBlock, 0, Number.MAX_SAFE_INTEGER));
}

/**
 * Decimals of the token a skill on `network` is paid in, as far as this registry counts it: the
 * configured token's on its own network, the built-in USDC's elsewhere.
 *
 * @example
 * formatPrice(revenueAtomic, tokenDecimals(config.chain, skill.network));
 */
export function tokenDecimals(chain: Pick<ChainConfig, 'network' | 'usdcDecimals'>, network: string): number {
  if (network === chain.network) return chain.usdcDecimals;
  return getKnownNetwork(network)?.usdc.decimals ?? USDC_DECIMALS;
}

/** A CAIP-2 network (or a v1 name such as `base`) from `name`, default Base mainnet. */
export function readNetwork(env: Env, name: string): Caip2Network {
  const raw = read(env, name) ?? CHAIN_DEFAULTS.network;
  try {
    const network = normalizeNetwork(raw);
    if (isCaip2Network(network)) return network;
  } catch {
    // reported below
  }
  throw new ConfigError(name, `must be a CAIP-2 network such as eip155:8453, got "${raw.slice(0, 64)}"`);
}

function readUsdc(env: Env, network: Caip2Network): Address {
  const raw = read(env, 'MARKET_USDC_ADDRESS');
  if (raw === undefined) {
    const known = getKnownNetwork(network)?.usdc.address;
    if (!known) throw new ConfigError('MARKET_USDC_ADDRESS', `is required for ${network} (no built-in USDC)`);
    return known;
  }
  if (!ADDRESS_PATTERN.test(raw))
    throw new ConfigError('MARKET_USDC_ADDRESS', `must be a token address (0x + 40 hex), got "${raw.slice(0, 64)}"`);
  return getAddress(raw.toLowerCase());
}

/** The RPC URL in `name`, or the network's public RPC; required where there is none. */
export function readRpcUrl(env: Env, name: string, network: Caip2Network): string {
  const url = readHttpUrl(env, name);
  if (url) return url.toString();
  const fallback = PUBLIC_RPC_URLS[network];
  if (!fallback) throw new ConfigError(name, `is required for ${network} (no public default)`);
  return fallback;
}

/**
 * MARKET_SKILL_NETWORKS: the networks skills may be listed on, comma-separated (CAIP-2 or v1
 * names); undefined when unset (any network, unless the facilitator's /supported says otherwise).
 */
export function readSkillNetworks(env: Env): Caip2Network[] | undefined {
  const raw = read(env, 'MARKET_SKILL_NETWORKS');
  if (raw === undefined) return undefined;
  const names = raw
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 0) throw new ConfigError('MARKET_SKILL_NETWORKS', 'must name at least one network, e.g. eip155:8453');
  return names.map((name) => readNetwork({ MARKET_SKILL_NETWORKS: name }, 'MARKET_SKILL_NETWORKS'));
}
