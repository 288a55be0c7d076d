/**
 * Wallets the page can use, all as EIP-1193 providers: the injected ones found by EIP-6963
 * discovery (mipd), a legacy `window.ethereum`, and in dev mode the demo wallet. Signing goes
 * through `request` only, so adding a kind of wallet is adding one `WalletOption`.
 */
import { signal } from '@preact/signals';
import { createStore } from 'mipd';

export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] | Record<string, unknown> }): Promise<unknown>;
  on?(event: 'accountsChanged', listener: (accounts: unknown) => void): void;
}

export interface WalletOption {
  id: string;
  name: string;
  /** A data: URI image from the wallet's EIP-6963 announcement. */
  icon: string | undefined;
  provider: Eip1193Provider;
}

/** Injected wallets announced so far, in announcement order. */
export const discovered = signal<WalletOption[]>([]);

let started = false;

/** Starts listening for EIP-6963 announcements (and asks wallets to announce). */
export function discoverWallets(): void {
  if (started) return;
  started = true;
  const store = createStore();
  const update = () => {
    const found: WalletOption[] = store.getProviders().map((detail) => ({
      id: detail.info.uuid,
      name: detail.info.name,
      icon: /^data:image\//.test(detail.info.icon) ? detail.info.icon : undefined,
      provider: detail.provider as Eip1193Provider,
    }));
    const legacy = (window as { ethereum?: Eip1193Provider }).ethereum;
    // An old wallet that only sets window.ethereum, and is not one of the announced providers.
    if (legacy && !found.some((w) => w.provider === legacy))
      found.push({ id: 'injected', name: 'Browser wallet', icon: undefined, provider: legacy });
    discovered.value = found;
  };
  store.subscribe(update, { emitImmediately: true });
  update();
}

/** The first account the wallet hands over after asking the user. */
export async function requestAddress(provider: Eip1193Provider): Promise<`0x${string}`> {
  const accounts = (await provider.request({ method: 'eth_requestAccounts' })) as unknown;
  const first = Array.isArray(accounts) ? accounts[0] : undefined;
  if (typeof first !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(first)) throw new Error('The wallet did not share an account.');
  return first as `0x${string}`;
}

/** A wallet's refusal (EIP-1193 code 4001) in words a person understands. */
export function walletErrorMessage(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown };
  if (e?.code === 4001) return 'You declined the request in your wallet.';
  if (e?.code === 4100) return 'The wallet has not authorized this site. Connect it first.';
  return typeof e?.message === 'string' && e.message ? e.message : 'The wallet failed to answer.';
}
