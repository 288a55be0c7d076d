import type { Address } from 'viem';
import { MarketError } from '../http/errors';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { decryptKeystore, encryptKeystore, MIN_PASSPHRASE_LENGTH, type EncryptOptions } from './keystore';
import { readKeystoreFile, writeKeystoreFile } from './keystore-file';
import { looksLikePrivateKey, PRIVATE_KEY_REFUSAL } from './private-keys';
import { walletApi, type WalletApiOptions, type WalletRecord } from './registry-client';

/** Options of {@link createSpendingWallet}: the registry to register with, the passphrase and where the keystore goes. */
export interface CreateSpendingWalletOptions extends WalletApiOptions {
  /** Encrypts the keystore; never sent anywhere. At least 8 characters. */
  passphrase: string;
  /** Where the keystore goes: a path, or a function of the new address. Never overwritten. */
  keystorePath: string | ((address: string) => string);
  /** Optional label shown in wallet lists. */
  label?: string;
  /** Keystore encryption cost (tests lower it); default geth's standard scrypt. */
  keystore?: EncryptOptions;
}

/** What {@link createSpendingWallet} made: the address, the keystore file and the registry's record. */
export interface CreatedSpendingWallet {
  address: Address;
  keystorePath: string;
  /** The registry's record of the wallet, now the active one. */
  wallet: WalletRecord;
}

/**
 * Registration failed after the keystore was saved: the key is safe in `keystorePath`.
 *
 * @example
 * try {
 *   await createSpendingWallet({ apiUrl, apiKey, passphrase, keystorePath: './wallet.json' });
 * } catch (error) {
 *   if (error instanceof WalletRegistrationError) console.error(`Saved ${error.address} to ${error.keystorePath}; register it later`);
 *   else throw error;
 * }
 */
export class WalletRegistrationError extends MarketError {
  override readonly name = 'WalletRegistrationError';
  declare readonly code: 'wallet_not_registered';

  constructor(
    readonly address: Address,
    readonly keystorePath: string,
    override readonly cause: unknown,
  ) {
    super(
      'wallet_not_registered',
      `The wallet ${address} was saved to ${keystorePath} but could not be registered: ${(cause as Error)?.message ?? String(cause)}`,
      { cause },
    );
  }
}

/**
 * Creates a self-custody spending wallet: the key is generated here (viem), encrypted into a
 * Web3 Secret Storage v3 keystore file (mode 0600) and only the address is registered with the
 * registry, where it becomes the active wallet. The key never leaves this process.
 *
 * @example
 * const { address, keystorePath } = await createSpendingWallet({
 *   apiUrl: 'http://localhost:3000', apiKey: 'ck_…', passphrase, keystorePath: (a) => `./wallets/${a}.json`, label: 'agent',
 * });
 * @throws WalletRegistrationError when registration fails (the keystore is kept)
 */
export async function createSpendingWallet(options: CreateSpendingWalletOptions): Promise<CreatedSpendingWallet> {
  if (typeof options.passphrase !== 'string' || options.passphrase.length < MIN_PASSPHRASE_LENGTH) {
    throw new TypeError(`createSpendingWallet: the passphrase must be at least ${MIN_PASSPHRASE_LENGTH} characters`);
  }
  if (options.label !== undefined && looksLikePrivateKey(options.label)) throw new TypeError(PRIVATE_KEY_REFUSAL);
  const api = walletApi(options);
  const privateKey = generatePrivateKey();
  const account = privateKeyToAccount(privateKey);
  const { address } = account;
  const keystore = await encryptKeystore(privateKey, options.passphrase, options.keystore);
  const keystorePath = typeof options.keystorePath === 'function' ? options.keystorePath(address) : options.keystorePath;
  // Saved before registering, so a failed registration never loses the key.
  await writeKeystoreFile(keystorePath, keystore);
  try {
    // Signed by the new key: the registry knows the wallet is yours (its payments let you review).
    const wallet = await api.register(address, options.label, account);
    return { address, keystorePath, wallet };
  } catch (error) {
    throw new WalletRegistrationError(address, keystorePath, error);
  }
}

/**
 * Opens a keystore file for paying: returns a viem account that signs locally (e.g. EIP-3009
 * payment authorizations).
 *
 * @example const account = await loadSpendingWallet({ keystorePath, passphrase });
 * @throws KeystoreError (`wrong_passphrase`, …) or a file-system error
 */
export async function loadSpendingWallet(options: { keystorePath: string; passphrase: string }): Promise<PrivateKeyAccount> {
  const keystore = await readKeystoreFile(options.keystorePath);
  return privateKeyToAccount(await decryptKeystore(keystore, options.passphrase));
}
