/**
 * skill-market: the SDK of the skill marketplace.
 *
 * Consumers: `new SkillMarket({ apiUrl, wallet })`, then `search`, `info`, `call`.
 * Wallets: `createSpendingWallet` makes a self-custody keystore, `loadSpendingWallet` opens one
 * as a viem account to pass as `wallet`.
 *
 * @example
 * import { SkillMarket, loadSpendingWallet } from 'skill-market';
 * const wallet = await loadSpendingWallet({ keystorePath: './wallet.json', passphrase });
 * const market = new SkillMarket({ apiUrl: 'https://registry.example', wallet, budget: '$1' });
 * const answer = await market.call('summarize', { text });
 *
 * @module skill-market
 */
export * from './client/index';
export {
  createSpendingWallet,
  loadSpendingWallet,
  KeystoreError,
  WalletRegistrationError,
  type CreateSpendingWalletOptions,
  type CreatedSpendingWallet,
} from './wallet/index';
export type { JsonSchema, ValueProblem } from './json-schema/index';
export {
  parsePrice,
  formatPrice,
  formatPriceUsd,
  X402Error,
  BASE_MAINNET,
  BASE_SEPOLIA,
  DEFAULT_NETWORK,
  type AssetInfo,
  type Caip2Network,
  type PaymentRequirements,
  type SettleResponse,
  type TypedDataSigner,
} from './x402/index';
