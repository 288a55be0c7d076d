import { describe, expect, it } from 'bun:test';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { USD_COIN_BYTECODE } from '../../src/chain/token';
import { compileContracts, multicall3Abi, testSmartWalletAbi, usdCoinAbi } from '../support/chain';
import { abiSignatures as signatures } from '../support/chain/abi-items';

describe('compiled test contracts', () => {
  it('match the hand-written usdCoinAbi item by item', async () => {
    const { UsdCoin } = await compileContracts();
    expect(signatures(usdCoinAbi)).toEqual(signatures(UsdCoin.abi));
  });

  it('give the token the bytecode committed in src/chain/token/artifact.ts (else run bun scripts/token-artifact.ts)', async () => {
    const { UsdCoin } = await compileContracts();
    expect(USD_COIN_BYTECODE).toBe(UsdCoin.bytecode);
  });

  it('match the hand-written testSmartWalletAbi item by item', async () => {
    const { TestSmartWallet } = await compileContracts();
    expect(signatures(testSmartWalletAbi)).toEqual(signatures(TestSmartWallet.abi));
  });

  it('match the hand-written multicall3Abi item by item', async () => {
    const { Multicall3 } = await compileContracts();
    expect(signatures(multicall3Abi)).toEqual(signatures(Multicall3.abi));
  });

  it('are compiled once per process and cached on disk', async () => {
    const first = await compileContracts();
    expect(await compileContracts()).toBe(first);
    const cacheDir = fileURLToPath(new URL('../../node_modules/.cache/skill-market-contracts/', import.meta.url));
    expect(existsSync(cacheDir)).toBe(true);
    expect(readdirSync(cacheDir).some((f) => f.endsWith('.json'))).toBe(true);
    expect(first.UsdCoin.bytecode).toMatch(/^0x[0-9a-f]{100,}$/);
  });
});
