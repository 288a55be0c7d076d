import { describe, expect, it } from 'bun:test';
import {
  BASE_MAINNET,
  BASE_SEPOLIA,
  X402Error,
  getKnownNetwork,
  isCaip2Network,
  normalizeNetwork,
  parseCaip2,
  resolveAsset,
  toCaip2,
  toV1Name,
  validateAsset,
} from 'skill-market/x402';
import { localAsset, thrown } from './factories';

function code(fn: () => unknown): string {
  const error = thrown(fn);
  expect(error).toBeInstanceOf(X402Error);
  return (error as X402Error).code;
}

describe('networks', () => {
  it('knows Base mainnet and Base Sepolia USDC with their EIP-712 domains', () => {
    expect(resolveAsset('eip155:8453')).toEqual({
      address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      name: 'USD Coin',
      version: '2',
      decimals: 6,
    });
    expect(resolveAsset('eip155:84532')).toEqual({
      address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      name: 'USDC',
      version: '2',
      decimals: 6,
    });
  });

  it('parses CAIP-2 eip155 ids into chain ids', () => {
    expect(parseCaip2('eip155:8453')).toBe(8453);
    expect(parseCaip2('eip155:31337')).toBe(31337);
    expect(toCaip2(84532)).toBe('eip155:84532');
    expect(isCaip2Network('eip155:1')).toBe(true);
    expect(isCaip2Network('base')).toBe(false);
  });

  it('rejects malformed network ids with invalid_network', () => {
    for (const bad of [
      '',
      'base',
      'eip155:',
      'eip155:0',
      'eip155:08453',
      'eip155:-1',
      'eip155:1.5',
      'EIP155:8453',
      'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
      ' eip155:1',
      'eip155:99999999999999999',
    ]) {
      expect(code(() => parseCaip2(bad))).toBe('invalid_network');
    }
    expect(code(() => parseCaip2(8453 as unknown as string))).toBe('invalid_network');
    expect(code(() => toCaip2(0))).toBe('invalid_network');
  });

  it('maps v1 names to CAIP-2 and back', () => {
    expect(normalizeNetwork('base')).toBe('eip155:8453');
    expect(normalizeNetwork('base-sepolia')).toBe('eip155:84532');
    expect(normalizeNetwork('eip155:31337')).toBe('eip155:31337');
    expect(toV1Name('eip155:8453')).toBe('base');
    expect(toV1Name('eip155:84532')).toBe('base-sepolia');
    expect(toV1Name('eip155:31337')).toBeUndefined();
    expect(getKnownNetwork('base')).toBe(BASE_MAINNET);
    expect(getKnownNetwork('eip155:84532')).toBe(BASE_SEPOLIA);
    expect(code(() => normalizeNetwork('polygon'))).toBe('invalid_network');
  });

  it('uses a caller-supplied asset on any eip155 chain, checksummed', () => {
    const asset = localAsset({ name: 'Local USD', version: '1' });
    const resolved = resolveAsset('eip155:31337', { ...asset, address: asset.address.toLowerCase() as `0x${string}` });
    expect(resolved).toEqual(asset);
  });

  it('requires an asset on chains without a built-in USDC', () => {
    expect(code(() => resolveAsset('eip155:31337'))).toBe('invalid_network');
  });

  it('rejects an invalid custom asset with invalid_asset', () => {
    const asset = localAsset();
    for (const bad of [
      { ...asset, address: '0x1234' },
      { ...asset, name: '' },
      { ...asset, version: 2 },
      { ...asset, decimals: -1 },
      { ...asset, decimals: 6.5 },
      null,
    ]) {
      expect(code(() => validateAsset(bad as never))).toBe('invalid_asset');
    }
  });
});
