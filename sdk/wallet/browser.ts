/**
 * The spending-wallet parts that run in a web page (the `browser` condition of
 * `skill-market/wallet`): keystores made and opened with Web Crypto, the private-key guard, and
 * the registry's wallet endpoints. Keystore files and spending wallets on disk need Node or Bun.
 */
export {
  encryptKeystore,
  decryptKeystore,
  KeystoreError,
  DEFAULT_SCRYPT,
  MIN_PASSPHRASE_LENGTH,
  type KeystoreV3,
  type KeystoreErrorCode,
  type EncryptOptions,
  type ScryptKdfParams,
  type Pbkdf2KdfParams,
} from './keystore';
export {
  walletApi,
  type WalletApi,
  type WalletApiOptions,
  type WalletRecord,
  type ActiveWalletRecord,
} from './registry-client';
export { looksLikePrivateKey, findPrivateKeyMaterial, PRIVATE_KEY_REFUSAL, TOO_DEEP } from './private-keys';
