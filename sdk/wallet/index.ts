/**
 * Consumer spending wallets: self-custody keys made and kept on the client (Web3 Secret Storage
 * v3 keystore files), only the address registered with the registry. The keystore itself is Web
 * Crypto, @noble/hashes and viem (it runs in a browser page too); files need node:fs. Runs on
 * Node 20+ and Bun.
 */
export {
  createSpendingWallet,
  loadSpendingWallet,
  WalletRegistrationError,
  MIN_PASSPHRASE_LENGTH,
  type CreateSpendingWalletOptions,
  type CreatedSpendingWallet,
} from './spending-wallet';
export {
  encryptKeystore,
  decryptKeystore,
  KeystoreError,
  DEFAULT_SCRYPT,
  type KeystoreV3,
  type KeystoreErrorCode,
  type EncryptOptions,
  type ScryptKdfParams,
  type Pbkdf2KdfParams,
} from './keystore';
export { writeKeystoreFile, readKeystoreFile } from './keystore-file';
export {
  walletApi,
  WalletApiError,
  type WalletApi,
  type WalletApiOptions,
  type WalletRecord,
  type ActiveWalletRecord,
} from './registry-client';
export { looksLikePrivateKey, findPrivateKeyMaterial, PRIVATE_KEY_REFUSAL } from './private-keys';
