/**
 * Consumer spending wallets: self-custody keys made and kept on the client (Web3 Secret Storage
 * v3 keystore files), only the address registered with the registry. The keystore itself is Web
 * Crypto, @noble/hashes and viem (it runs in a browser page too: see browser.ts, the `browser`
 * condition of this subpath); files need node:fs. Runs on Node 20+ and Bun.
 *
 * @module skill-market/wallet
 */
export * from './browser';
export {
  createSpendingWallet,
  loadSpendingWallet,
  WalletRegistrationError,
  type CreateSpendingWalletOptions,
  type CreatedSpendingWallet,
} from './spending-wallet';
export { writeKeystoreFile, readKeystoreFile } from './keystore-file';
