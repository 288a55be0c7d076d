/** MARKET_CHANNELS_FROM_BLOCK: the first block the registry reads payment-channel events from. */
import { describe, expect, it } from 'bun:test';
import { ConfigError, loadRegistryConfig } from '../../src/config';

describe('the start block of payment-channel event reads', () => {
  it('is block 0 unless set, on every network', () => {
    expect(loadRegistryConfig({}, '/').chain.channelsFromBlock).toBe(0n);
    expect(loadRegistryConfig({ MARKET_NETWORK: 'base-sepolia' }, '/').chain.channelsFromBlock).toBe(0n);
  });

  it('takes a block number from MARKET_CHANNELS_FROM_BLOCK, blank being unset', () => {
    expect(loadRegistryConfig({ MARKET_CHANNELS_FROM_BLOCK: '25300000' }, '/').chain.channelsFromBlock).toBe(25_300_000n);
    expect(loadRegistryConfig({ MARKET_CHANNELS_FROM_BLOCK: ' 0 ' }, '/').chain.channelsFromBlock).toBe(0n);
    expect(loadRegistryConfig({ MARKET_CHANNELS_FROM_BLOCK: '  ' }, '/').chain.channelsFromBlock).toBe(0n);
  });

  for (const value of ['-1', '1.5', '0x10', 'latest', 'earliest', '9007199254740992']) {
    it(`refuses MARKET_CHANNELS_FROM_BLOCK=${value} naming the variable`, () => {
      let caught: unknown;
      try {
        loadRegistryConfig({ MARKET_CHANNELS_FROM_BLOCK: value }, '/');
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      expect((caught as ConfigError).variable).toBe('MARKET_CHANNELS_FROM_BLOCK');
      expect((caught as ConfigError).message).toMatch(/^MARKET_CHANNELS_FROM_BLOCK must be a whole number from 0 to 9007199254740991/);
    });
  }
});
