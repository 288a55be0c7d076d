/**
 * `market dev`'s chain carries the batch-settlement contracts at their canonical addresses, from
 * the first start and after a restart from its state file.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestClient, http } from 'viem';
import {
  BATCH_SETTLEMENT_ADDRESS,
  BATCH_SETTLEMENT_RUNTIME,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  ERC3009_DEPOSIT_COLLECTOR_RUNTIME,
  installBatchSettlement,
} from '../../../src/chain/batch-settlement';
import { type DevChain, startDevChain } from '../../../src/dev/chain';

const dirs: string[] = [];
const chains: DevChain[] = [];
afterAll(async () => {
  for (const chain of chains) await chain.anvil.stop();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function start(statePath: string): Promise<DevChain> {
  const chain = await startDevChain({ port: 0, statePath, onExit: () => {} });
  chains.push(chain);
  return chain;
}

async function codeAt(chain: DevChain) {
  return Promise.all([
    chain.client.getCode({ address: BATCH_SETTLEMENT_ADDRESS }),
    chain.client.getCode({ address: ERC3009_DEPOSIT_COLLECTOR_ADDRESS }),
  ]);
}

describe('the dev chain', () => {
  it('has x402BatchSettlement and its ERC-3009 collector at their canonical addresses, also after a restart from its state', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'market-dev-chain-'));
    dirs.push(dir);
    const statePath = join(dir, 'anvil-state.json');

    const first = await start(statePath);
    expect(await codeAt(first)).toEqual([BATCH_SETTLEMENT_RUNTIME, ERC3009_DEPOSIT_COLLECTOR_RUNTIME]);
    await first.anvil.stop(); // dumps the state file

    const again = await start(statePath);
    expect(await codeAt(again)).toEqual([BATCH_SETTLEMENT_RUNTIME, ERC3009_DEPOSIT_COLLECTOR_RUNTIME]);
  });

  it('leaves identical code alone and replaces any other code at those addresses', async () => {
    const chain = chains.at(-1)!;
    const client = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) });
    expect(await installBatchSettlement(client)).toEqual({ installed: false });
    await client.setCode({ address: ERC3009_DEPOSIT_COLLECTOR_ADDRESS, bytecode: '0x00' });
    expect(await installBatchSettlement(client)).toEqual({ installed: true });
    expect(await codeAt(chain)).toEqual([BATCH_SETTLEMENT_RUNTIME, ERC3009_DEPOSIT_COLLECTOR_RUNTIME]);
  });
});
