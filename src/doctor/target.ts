/** What `market doctor` checks (the target) and what it answers (one result per check). */
import { getKnownNetwork } from 'skill-market/x402';

type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  /** What was checked, e.g. `rpc`, `token`, `facilitator`. */
  name: string;
  status: CheckStatus;
  /** One plain sentence: what holds, or what is wrong and what to do. */
  detail: string;
}

export interface DoctorTarget {
  /** CAIP-2 network the deployment settles on. */
  network: string;
  rpcUrl?: string | undefined;
  /** The token paid in (default: the network's USDC). */
  asset?: string | undefined;
  facilitatorUrl?: string | undefined;
  registryUrl?: string | undefined;
  /** A creator key (sk_…) to check against the registry. */
  apiKey?: string | undefined;
  /** A skill server's base URL to check. */
  endpoint?: string | undefined;
  /** The registry's MARKET_CHANNELS_FROM_BLOCK (default 0, its default). */
  channelsFromBlock?: bigint | undefined;
  /** Per request; default 5000 ms. */
  timeoutMs?: number;
}

/** Chain ids of local development chains (anvil, Hardhat): their history is short, and theirs alone. */
const LOCAL_CHAIN_IDS = new Set([31337, 1337]);

export const isLocalNetwork = (network: string) => LOCAL_CHAIN_IDS.has(Number(network.split(':')[1]));

/** The network with its name, e.g. `eip155:8453 (Base)`. */
export const label = (network: string) => {
  const known = getKnownNetwork(network);
  if (known?.chainId === 8453) return `${network} (Base)`;
  if (known?.chainId === 84532) return `${network} (Base Sepolia)`;
  return isLocalNetwork(network) ? `${network} (local test chain)` : network;
};
