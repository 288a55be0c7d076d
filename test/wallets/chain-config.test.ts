import { describe, expect, it } from 'bun:test';
import { ConfigError, loadRegistryConfig } from '../../src/config';

describe('spending-wallet chain configuration', () => {
  it('defaults to Base mainnet, its USDC (6 decimals) and its public RPC, a 3 s RPC timeout and a 5 s balance cache', () => {
    expect(loadRegistryConfig({}, '/').chain).toEqual({
      network: 'eip155:8453',
      usdcAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      usdcDecimals: 6,
      rpcUrl: 'https://mainnet.base.org',
      rpcTimeoutMs: 3000,
      balanceCacheMs: 5000,
      channelsFromBlock: 0n,
    });
  });

  it('knows Base Sepolia, by CAIP-2 id or v1 name', () => {
    for (const MARKET_NETWORK of ['eip155:84532', 'base-sepolia']) {
      expect(loadRegistryConfig({ MARKET_NETWORK }, '/').chain).toMatchObject({
        network: 'eip155:84532',
        usdcAddress: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
        rpcUrl: 'https://sepolia.base.org',
      });
    }
  });

  it('takes the token, its decimals and the RPC from MARKET_USDC_ADDRESS, MARKET_USDC_DECIMALS and MARKET_RPC_URL, checksumming the address', () => {
    const config = loadRegistryConfig(
      {
        MARKET_NETWORK: 'eip155:31337',
        MARKET_USDC_ADDRESS: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
        MARKET_USDC_DECIMALS: '18',
        MARKET_RPC_URL: 'http://127.0.0.1:8545',
        MARKET_RPC_TIMEOUT_MS: '500',
        MARKET_BALANCE_CACHE_MS: '0',
      },
      '/',
    );
    expect(config.chain).toEqual({
      network: 'eip155:31337',
      usdcAddress: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
      usdcDecimals: 18,
      rpcUrl: 'http://127.0.0.1:8545/',
      rpcTimeoutMs: 500,
      balanceCacheMs: 0,
      channelsFromBlock: 0n,
    });
  });

  const bad: [Record<string, string>, RegExp][] = [
    [{ MARKET_NETWORK: 'base-mainnet' }, /^MARKET_NETWORK must be a CAIP-2 network/],
    [{ MARKET_NETWORK: 'eip155:31337', MARKET_RPC_URL: 'http://127.0.0.1:8545' }, /^MARKET_USDC_ADDRESS is required for eip155:31337/],
    [
      { MARKET_NETWORK: 'eip155:31337', MARKET_USDC_ADDRESS: '0x5fbdb2315678afecb367f032d93f642f64180aa3' },
      /^MARKET_RPC_URL is required for eip155:31337/,
    ],
    [{ MARKET_USDC_ADDRESS: '0x1234' }, /^MARKET_USDC_ADDRESS must be a token address/],
    [{ MARKET_RPC_URL: 'ws://node' }, /^MARKET_RPC_URL must be an http\(s\) URL/],
    [{ MARKET_RPC_TIMEOUT_MS: '10' }, /^MARKET_RPC_TIMEOUT_MS must be a whole number from 100 to 60000/],
    [{ MARKET_BALANCE_CACHE_MS: 'soon' }, /^MARKET_BALANCE_CACHE_MS must be a whole number/],
  ];
  for (const [env, message] of bad) {
    it(`refuses ${JSON.stringify(env)} naming the variable`, () => {
      expect(() => loadRegistryConfig(env, '/')).toThrow(ConfigError);
      expect(() => loadRegistryConfig(env, '/')).toThrow(message);
    });
  }
});
