import type { Chain, Hex, TestClient, Transport } from 'viem';
import { getCode, setCode } from 'viem/actions';
import { PERMIT2_ADDRESS, UPTO_PROXY_ADDRESS } from './addresses';
import { PERMIT2_RUNTIME, UPTO_PROXY_RUNTIME } from './artifact';

const CONTRACTS = [
  [PERMIT2_ADDRESS, PERMIT2_RUNTIME],
  [UPTO_PROXY_ADDRESS, UPTO_PROXY_RUNTIME],
] as const satisfies readonly (readonly [Hex, Hex])[];

/**
 * Places Permit2 and the x402 upto proxy at their canonical addresses with `anvil_setCode`
 * (neither has a constructor or immutables, so runtime code is all they need). Code already there
 * and identical is left alone; other code is replaced, keeping the contracts' storage (Permit2's
 * spent nonces). Returns whether anything was written.
 */
export async function installUpto(client: TestClient<'anvil', Transport, Chain | undefined>): Promise<{ installed: boolean }> {
  const results = await Promise.all(
    CONTRACTS.map(async ([address, bytecode]) => {
      if ((await getCode(client, { address }))?.toLowerCase() === bytecode.toLowerCase()) return false;
      await setCode(client, { address, bytecode });
      return true;
    }),
  );
  return { installed: results.some(Boolean) };
}
