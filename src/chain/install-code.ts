import type { Chain, Hex, TestClient, Transport } from 'viem';
import { getCode, setCode } from 'viem/actions';

/** An anvil client, which may set any address's code. */
export type AnvilClient = TestClient<'anvil', Transport, Chain | undefined>;

/**
 * Places each contract's runtime code at its address with `anvil_setCode` (for contracts without a
 * constructor or immutables, whose runtime code is all they need). Code already there and identical
 * (a chain restored from its state file) is left alone; other code is replaced, keeping the
 * contract's storage. Returns whether anything was written.
 */
export async function installRuntimeCode(
  client: AnvilClient,
  contracts: readonly (readonly [address: Hex, runtime: Hex])[],
): Promise<{ installed: boolean }> {
  const results = await Promise.all(
    contracts.map(async ([address, bytecode]) => {
      if ((await getCode(client, { address }))?.toLowerCase() === bytecode.toLowerCase()) return false;
      await setCode(client, { address, bytecode });
      return true;
    }),
  );
  return { installed: results.some(Boolean) };
}
