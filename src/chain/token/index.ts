/**
 * Our EIP-3009 test USDC (UsdCoin.sol, a stand-in for Circle's FiatToken on local chains): its
 * ABI, its committed bytecode (scripts/token-artifact.ts), its EIP-712 domain, and deployment.
 * The one home of the token for `market dev` and the tests' chain fixture.
 */
export { usdCoinAbi } from './abi';
export { USD_COIN_BYTECODE } from './artifact';
export { deployToken, tokenAddressOf } from './deploy';

/** The token's fixed metadata; its EIP-712 domain is `{ name, version, chainId, verifyingContract }`. */
export const USD_COIN = { name: 'USD Coin', symbol: 'USDC', version: '2', decimals: 6 } as const;
