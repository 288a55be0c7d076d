/**
 * The one balance read: ERC-20 `balanceOf` (viem's `erc20Abi`) in the token's atomic units, and a
 * short reason for a failed read that names no RPC URL (it may carry a provider key).
 */
import { erc20Abi, type Address, type PublicClient } from 'viem';

/** `owner`'s balance of `asset`, atomic units; rejects as the RPC does. */
export function readTokenBalance(client: Pick<PublicClient, 'readContract'>, asset: Address, owner: Address): Promise<bigint> {
  return client.readContract({ address: asset, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
}

/** Why a balance could not be read, for a client to see: no URL, no provider text. */
export function balanceFailure(error: unknown, timeoutMs: number): string {
  const names = new Set<string>();
  for (let e = error as { name?: string; cause?: unknown } | undefined, depth = 0; e && depth < 8; e = e.cause as typeof e, depth++) {
    if (typeof e.name === 'string') names.add(e.name);
  }
  if (names.has('TimeoutError')) return `The RPC did not answer within ${timeoutMs} ms`;
  if (names.has('HttpRequestError')) return 'The RPC could not be reached';
  if (names.has('ContractFunctionZeroDataError') || names.has('ContractFunctionRevertedError'))
    return 'The USDC contract could not be read on this network';
  return 'The balance could not be read from the RPC';
}
