import { createPublicClient, http, type Address } from 'viem';
import { balanceFailure, readTokenBalance } from '../../../chain/token/balance';
import type { ChainConfig } from '../../../config/chain';
import type { Logger } from '../../../log';
import type { Clock } from '../../context';

type BalanceRead = { type: 'ok'; atomic: bigint; checkedAt: Date } | { type: 'unavailable'; error: string };

/** Live USDC balances, each address read at most once per cache window. */
export interface BalanceReader {
  readonly network: string;
  readonly asset: Address;
  /** The token's decimals (MARKET_USDC_DECIMALS): a balance's text has all of them. */
  readonly decimals: number;
  /** Never rejects: a failed or slow RPC becomes `{ type: 'unavailable' }`. */
  read(address: string): Promise<BalanceRead>;
}

/** Cache entries kept at most; expired ones are swept first when it fills. */
const MAX_ENTRIES = 10_000;

/**
 * `balanceOf` through viem on the configured RPC. Concurrent and repeated reads of one address
 * within `balanceCacheMs` share one RPC call (failures too, so a dead RPC is not hammered). The
 * wait is bounded by `rpcTimeoutMs` with no retries. Errors are reported without the RPC URL,
 * which may carry a provider key.
 */
export function balanceReader(chain: ChainConfig, clock: Clock, logger: Logger): BalanceReader {
  const client = createPublicClient({ transport: http(chain.rpcUrl, { timeout: chain.rpcTimeoutMs, retryCount: 0 }) });
  const cache = new Map<string, { expiresAt: number; result: Promise<BalanceRead> }>();

  const fetchBalance = async (address: Address): Promise<BalanceRead> => {
    try {
      const atomic = await readTokenBalance(client, chain.usdcAddress, address);
      return { type: 'ok', atomic, checkedAt: clock.now() };
    } catch (error) {
      const reason = balanceFailure(error, chain.rpcTimeoutMs);
      logger.warn('wallet balance read failed', { network: chain.network, reason, errorName: (error as Error)?.name });
      return { type: 'unavailable', error: reason };
    }
  };

  return {
    network: chain.network,
    asset: chain.usdcAddress,
    decimals: chain.usdcDecimals,
    read(address) {
      const now = clock.now().getTime();
      const hit = cache.get(address);
      if (hit && hit.expiresAt > now) return hit.result;
      if (cache.size >= MAX_ENTRIES) sweep(cache, now);
      const result = fetchBalance(address as Address);
      cache.set(address, { expiresAt: now + chain.balanceCacheMs, result });
      return result;
    },
  };
}

function sweep(cache: Map<string, { expiresAt: number }>, now: number): void {
  for (const [key, entry] of cache) if (entry.expiresAt <= now) cache.delete(key);
  // Still full of fresh entries: drop the oldest insertions.
  for (const key of cache.keys()) {
    if (cache.size < MAX_ENTRIES) break;
    cache.delete(key);
  }
}
