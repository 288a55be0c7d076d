import type { Chain, Hex, TestClient, Transport } from 'viem';
import { getCode, setCode } from 'viem/actions';
import { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from './addresses';
import { BATCH_SETTLEMENT_RUNTIME, ERC3009_DEPOSIT_COLLECTOR_RUNTIME } from './artifact';

const CONTRACTS = [
  [BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_RUNTIME],
  [ERC3009_DEPOSIT_COLLECTOR_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_RUNTIME],
] as const satisfies readonly (readonly [Hex, Hex])[];

/**
 * Places x402BatchSettlement and its ERC-3009 deposit collector at their canonical addresses with
 * `anvil_setCode` (neither has a constructor or immutables, so runtime code is all they need).
 * Code already there and identical (a chain restored from its state file) is left alone; other
 * code is replaced, keeping the contracts' storage. Returns whether anything was written.
 */
export async function installBatchSettlement(client: TestClient<'anvil', Transport, Chain | undefined>): Promise<{ installed: boolean }> {
  const results = await Promise.all(
    CONTRACTS.map(async ([address, bytecode]) => {
      if ((await getCode(client, { address }))?.toLowerCase() === bytecode.toLowerCase()) return false;
      await setCode(client, { address, bytecode });
      return true;
    }),
  );
  return { installed: results.some(Boolean) };
}
