/**
 * The wallet's token balance, read on chain (`balanceOf`) from the RPC: the first extra token
 * allowed (MARKET_ASSETS) or the network's USDC. Never throws: an unreadable balance is reported
 * as such, without the RPC URL (it may carry a provider key).
 */
import { createPublicClient, getAddress, http, type Address } from 'viem';
import { getKnownNetwork, normalizeNetwork, DEFAULT_NETWORK } from 'skill-market/x402';
import { readTokenBalance } from '../chain/token/balance';
import { PUBLIC_RPC_URLS } from '../config/chain';

export type BalanceResult = { ok: true; atomic: bigint; asset: Address; network: string } | { ok: false; error: string; network: string };

export async function readBalance(
  owner: Address,
  settings: { network: string | undefined; assets: string[]; rpcUrl: string | undefined },
): Promise<BalanceResult> {
  const network = normalizeNetwork(settings.network ?? DEFAULT_NETWORK);
  const asset = settings.assets[0] ?? getKnownNetwork(network)?.usdc.address;
  const rpcUrl = settings.rpcUrl ?? PUBLIC_RPC_URLS[network];
  if (!asset) return { ok: false, error: `no token known for ${network}: set MARKET_ASSETS`, network };
  if (!rpcUrl) return { ok: false, error: `no RPC for ${network}: set MARKET_RPC_URL`, network };
  try {
    const client = createPublicClient({ transport: http(rpcUrl, { timeout: 5_000, retryCount: 0 }) });
    const atomic = await readTokenBalance(client, getAddress(asset), owner);
    return { ok: true, atomic, asset: getAddress(asset), network };
  } catch (error) {
    return { ok: false, error: `the chain could not be read (${(error as Error)?.name ?? 'error'})`, network };
  }
}
