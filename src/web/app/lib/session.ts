/**
 * Who is signed in, and the wallet connected in this page. Signing in with a wallet is one
 * EIP-4361 signature: the registry's challenge, signed with `personal_sign`, exchanged for the
 * HttpOnly session cookies (the page never sees a token).
 */
import { effect, signal } from '@preact/signals';
import type { Creator } from 'skill-market/registry';
import { ApiError, call, registry, sessionHint } from './api';
import { discovered, discoverWallets, requestAddress, type WalletOption } from './wallet/provider';
import { signMessage } from './wallet/signer';

/** undefined while the first check runs, null when signed out. */
export const account = signal<Creator | null | undefined>(undefined);

/** The wallet this page is connected to (sign-in, Try it); forgotten on reload, the session is not. */
export const connected = signal<{ wallet: WalletOption; address: `0x${string}` } | undefined>(undefined);

export async function loadSession(): Promise<void> {
  try {
    account.value = await call(() => registry.me());
    sessionHint.set(true);
  } catch (error) {
    // Unknown counts as signed out (the views offer to sign in) rather than a page that waits forever.
    account.value = null;
    if (!(error instanceof ApiError && (error.status === 401 || error.status === 403))) throw error;
  }
}

const REMEMBERED = 'market.wallet';

/** Connects `wallet` (the wallet asks the user) without signing in. */
export async function connect(wallet: WalletOption): Promise<`0x${string}`> {
  const address = await requestAddress(wallet.provider);
  connected.value = { wallet, address };
  localStorage.setItem(REMEMBERED, wallet.id);
  follow(wallet);
  return address;
}

const followed = new WeakSet<WalletOption['provider']>();

/** The user switched or disconnected accounts in the wallet: pay from what it now shares, or from nothing. */
function follow(wallet: WalletOption): void {
  if (followed.has(wallet.provider)) return;
  followed.add(wallet.provider);
  wallet.provider.on?.('accountsChanged', (accounts) => {
    if (connected.peek()?.wallet.provider !== wallet.provider) return;
    const first = Array.isArray(accounts) ? accounts[0] : undefined;
    connected.value =
      typeof first === 'string' && /^0x[0-9a-fA-F]{40}$/.test(first) ? { wallet, address: first as `0x${string}` } : undefined;
  });
}

/**
 * Reconnects, without a prompt, the wallet used last time once it announces itself:
 * `eth_accounts` answers only when the wallet already trusts this site.
 */
export function restoreWallet(): void {
  const id = localStorage.getItem(REMEMBERED);
  if (!id) return;
  discoverWallets();
  const stop = effect(() => {
    const wallet = discovered.value.find((w) => w.id === id);
    if (!wallet || connected.peek()) return;
    queueMicrotask(() => stop());
    wallet.provider.request({ method: 'eth_accounts' }).then(
      (accounts) => {
        const first = Array.isArray(accounts) ? accounts[0] : undefined;
        if (!connected.peek() && typeof first === 'string' && /^0x[0-9a-fA-F]{40}$/.test(first)) {
          connected.value = { wallet, address: first as `0x${string}` };
          follow(wallet);
        }
      },
      () => undefined,
    );
  });
}

export async function signInWithWallet(wallet: WalletOption): Promise<Creator> {
  const address = await connect(wallet);
  const { message } = await call(() => registry.challenge(address));
  const signature = await signMessage(wallet.provider, address, message);
  const session = await call(() => registry.verify({ message, signature }));
  account.value = session.creator;
  sessionHint.set(true);
  return session.creator;
}

/** Exchanges an identity-provider token at `POST /auth/privy` for the session cookies. */
export async function signInWithProviderToken(token: string): Promise<Creator> {
  const session = await call(() => registry.providerLogin(token));
  account.value = session.creator;
  sessionHint.set(true);
  return session.creator;
}

export async function signOut(): Promise<void> {
  try {
    await call(() => registry.logout());
  } catch (error) {
    // An expired session is signed out already; anything else is worth telling.
    if (!(error instanceof ApiError && error.status === 401)) throw error;
  }
  account.value = null;
  connected.value = undefined;
  localStorage.removeItem(REMEMBERED);
  sessionHint.set(false);
}
