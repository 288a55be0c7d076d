/**
 * What the chain says about one EIP-3009 authorization, for whoever must know whether a payment
 * happened without trusting a facilitator's answer (or without one): the token's
 * `authorizationState(payer, nonce)`, and, while it is unused, whether it can still be used
 * (the latest block's timestamp against `validBefore`: no later block can be older), and for a
 * used one the transaction that used it. JSON-RPC over fetch; no client library state.
 */
import { decodeFunctionResult, encodeEventTopics, encodeFunctionData, numberToHex } from 'viem';
import type { Address, Hex } from './patterns';
import { jsonRpc } from './json-rpc';
import { eip3009Abi as abi } from './token';

/**
 * How far back {@link AuthorizationStateReader.usedIn} searches, in blocks: past any authorization
 * window a client accepts on Base (2 s blocks) and within the log range public RPCs serve.
 *
 * @example
 * const hash = await reader.usedIn?.(query); // undefined when used more than USED_LOG_LOOKBACK_BLOCKS blocks ago
 */
export const USED_LOG_LOOKBACK_BLOCKS = 5_000n;

/**
 * `used`: the nonce is spent on chain (the transfer happened, or the payer cancelled it);
 * `unused`: not yet, and it still may be; `expired`: unused and no block can use it any more.
 */
export type AuthorizationUse = 'used' | 'unused' | 'expired';

/** One EIP-3009 authorization to look up on chain: the token, the payer and the nonce. */
export interface AuthorizationQuery {
  asset: Address;
  payer: Address;
  nonce: Hex;
  /** The authorization's validBefore, unix seconds. */
  validBefore: bigint;
}

/** Reads whether an authorization was used, is still unused, or expired unused (the token's `authorizationState`). */
export interface AuthorizationStateReader {
  /** @throws Error when the RPC cannot be reached or answers an error */
  read(query: AuthorizationQuery): Promise<AuthorizationUse>;
  /**
   * The transaction that used the authorization (the token's `AuthorizationUsed(payer, nonce)`
   * log in the last {@link USED_LOG_LOOKBACK_BLOCKS} blocks); undefined when none is found.
   *
   * @throws Error when the RPC cannot be reached or answers an error
   */
  usedIn?(query: AuthorizationQuery): Promise<Hex | undefined>;
}

/** Options of {@link createAuthorizationStateReader}. */
export interface AuthorizationStateOptions {
  /** Per JSON-RPC request; default 5000 ms. */
  timeoutMs?: number;
  fetch?: (input: string, init?: RequestInit) => Promise<Response>;
}

/**
 * A reader over the JSON-RPC endpoint `rpcUrl`.
 *
 * @example
 * const reader = createAuthorizationStateReader('https://mainnet.base.org');
 * const { authorization } = decodePaymentPayload(header);
 * const use = await reader.read({
 *   asset: terms.requirements.asset,
 *   payer: authorization.from,
 *   nonce: authorization.nonce,
 *   validBefore: BigInt(authorization.validBefore),
 * }); // 'used' | 'unused' | 'expired'
 */
export function createAuthorizationStateReader(rpcUrl: string, options: AuthorizationStateOptions = {}): AuthorizationStateReader {
  const rpc = jsonRpc(rpcUrl, options);
  return {
    async read({ asset, payer, nonce, validBefore }) {
      // One block for both reads, so "unused at a block past validBefore" is final.
      const block = (await rpc('eth_getBlockByNumber', ['latest', false])) as { number?: string; timestamp?: string } | null;
      if (!block?.number || !block.timestamp) throw new Error('RPC eth_getBlockByNumber answered no block');
      const data = encodeFunctionData({ abi, functionName: 'authorizationState', args: [payer, nonce] });
      const result = await rpc('eth_call', [{ to: asset, data }, block.number]);
      if (decodeFunctionResult({ abi, functionName: 'authorizationState', data: result as Hex })) return 'used';
      // The token refuses once block.timestamp >= validBefore, and timestamps never go back.
      return BigInt(block.timestamp) >= validBefore ? 'expired' : 'unused';
    },
    async usedIn({ asset, payer, nonce }) {
      const latest = BigInt((await rpc('eth_blockNumber', [])) as string);
      const from = latest > USED_LOG_LOOKBACK_BLOCKS ? latest - USED_LOG_LOOKBACK_BLOCKS : 0n;
      const topics = encodeEventTopics({ abi, eventName: 'AuthorizationUsed', args: { authorizer: payer, nonce } });
      const logs = await rpc('eth_getLogs', [{ address: asset, topics, fromBlock: numberToHex(from), toBlock: numberToHex(latest) }]);
      if (!Array.isArray(logs)) throw new Error('RPC eth_getLogs answered no list');
      const log = (logs as { transactionHash?: unknown; removed?: boolean }[]).find(
        (l) => l.removed !== true && typeof l.transactionHash === 'string',
      );
      return log?.transactionHash as Hex | undefined;
    },
  };
}
