import { describe, expect, it } from 'bun:test';
import { loadRegistryConfig, PAYMENT_VERIFICATION_DEFAULTS, readPaymentVerificationConfig } from '../../src/config';

describe('payment verification configuration', () => {
  it('checks payments in the background except in tests, with the documented defaults', () => {
    expect(loadRegistryConfig({}, '/').payments).toEqual({ ...PAYMENT_VERIFICATION_DEFAULTS, enabled: true });
    expect(readPaymentVerificationConfig({}, 'test').enabled).toBe(false);
    expect(
      readPaymentVerificationConfig(
        {
          MARKET_PAYMENT_VERIFICATION: 'on',
          MARKET_PAYMENT_VERIFY_INTERVAL_MS: '100',
          MARKET_PAYMENT_VERIFY_ATTEMPTS: '3',
          MARKET_PAYMENT_VERIFY_RETRY: '5',
        },
        'test',
      ),
    ).toEqual({
      enabled: true,
      intervalMs: 100,
      maxAttempts: 3,
      retryBaseSeconds: 5,
    });
  });

  for (const [variable, value] of [
    ['MARKET_PAYMENT_VERIFICATION', 'sometimes'],
    ['MARKET_PAYMENT_VERIFY_ATTEMPTS', '0'],
    ['MARKET_PAYMENT_VERIFY_INTERVAL_MS', 'fast'],
  ] as const) {
    it(`refuses ${variable}=${value} naming the variable`, () => {
      expect(() => loadRegistryConfig({ [variable]: value }, '/')).toThrow(new RegExp(`^${variable} must`));
    });
  }
});
