/**
 * The registry's spending-wallet endpoints, through the one registry client, with a guard in front:
 * only addresses and labels are ever sent; anything shaped like a private key or recovery phrase
 * is refused before a request is made.
 */
import { MarketError } from '../http/errors';
import type { FetchLike } from '../http/exchange';
import { RegistryClient } from '../registry/client';
import type { ActiveWallet, WalletView } from '../registry/contract/index';
import { findPrivateKeyMaterial, PRIVATE_KEY_REFUSAL } from './private-keys';

/** A spending wallet as the registry returns it. */
export type WalletRecord = WalletView;

/** A wallet with its live USDC balance (`balance` null and `balanceError` set when the chain could not be read). */
export type ActiveWalletRecord = ActiveWallet;

/** What signs a wallet's proof: a viem account of the wallet (e.g. `privateKeyToAccount(key)`), signing locally. */
export interface MessageSigner {
  signMessage(args: { message: string }): Promise<`0x${string}`>;
}

/** Where the registry is and how to sign in to it, for {@link walletApi}. */
export interface WalletApiOptions {
  /** Registry base URL, e.g. `https://registry.example.com`. */
  apiUrl: string;
  /** An API key (`ck_…` or `sk_…`) or a session token. */
  apiKey: string;
  /** Injected for tests; default the global fetch. */
  fetch?: FetchLike;
  /** Per request; default 15 s. */
  timeoutMs?: number;
}

/**
 * The registry's spending-wallet endpoints. Errors are the registry client's: a RegistryError for
 * a registry's refusal, MarketError `private_key_refused` for a key caught before sending.
 *
 * @example
 * const api = walletApi({ apiUrl: 'http://localhost:3000', apiKey: process.env.MARKET_API_KEY! });
 * const active = await api.active(); // null when there is none
 */
export function walletApi(options: WalletApiOptions) {
  if (!options.apiUrl) throw new TypeError('walletApi: apiUrl is required');
  if (!options.apiKey) throw new TypeError('walletApi: apiKey is required');
  const registry = new RegistryClient({
    apiUrl: options.apiUrl,
    apiKey: options.apiKey,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
  const guarded = <T>(sent: unknown, send: () => Promise<T>): Promise<T> => {
    if (findPrivateKeyMaterial(sent) !== undefined) return Promise.reject(new MarketError('private_key_refused', PRIVATE_KEY_REFUSAL));
    return send();
  };

  return {
    /**
     * Registers an address (never a key) and makes it the active wallet. With `signer` (the
     * wallet's own account, which signs locally) it proves holding the key: the registry issues a
     * message, the signer signs it, and the wallet's payments become yours for reviews.
     */
    register: (address: string, label?: string | null, signer?: MessageSigner) =>
      guarded({ address, label }, async () => {
        const body = label === undefined ? { address } : { address, label };
        if (!signer) return registry.registerWallet(body);
        const { message } = await registry.walletChallenge(address);
        return registry.registerWallet({ ...body, proof: { message, signature: await signer.signMessage({ message }) } });
      }),
    /** The active wallet with its live balance, or null. */
    active: () => registry.activeWallet(),
    /** Every wallet, revoked ones included. */
    list: () => registry.wallets(),
    /** Sets a label; null removes it. */
    setLabel: (address: string, label: string | null) => guarded({ address, label }, () => registry.setWalletLabel(address, label)),
    /** Revokes a wallet (funds on-chain are untouched); returns it with `revokedAt`. */
    revoke: (address: string) => guarded({ address }, () => registry.revokeWallet(address)),
  };
}

/** The registry's wallet endpoints, as {@link walletApi} returns them. */
export type WalletApi = ReturnType<typeof walletApi>;
