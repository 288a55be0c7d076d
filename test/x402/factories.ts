/** Test data builders for the x402 module: each call makes fresh accounts and terms. */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildPaymentTerms, parsePrice, type AssetInfo, type TermsInput } from 'skill-market/x402';

export const NOW = 1_750_000_000;

export function newAccount() {
  return privateKeyToAccount(generatePrivateKey());
}

/** A local EIP-3009 token, as the anvil tests deploy it. */
export function localAsset(overrides: Partial<AssetInfo> = {}): AssetInfo {
  return {
    address: newAccount().address,
    name: 'USD Coin',
    version: '2',
    decimals: 6,
    ...overrides,
  };
}

export function makeTerms(overrides: Partial<TermsInput> = {}) {
  return buildPaymentTerms({
    amount: parsePrice('$0.001'),
    payTo: newAccount().address,
    network: 'eip155:84532',
    resourceUrl: 'https://skills.example/echo',
    description: 'Echo the input',
    mimeType: 'application/json',
    ...overrides,
  });
}

/** Runs fn and returns what it threw (fails the test when it returns normally). */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

export async function rejected(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}
