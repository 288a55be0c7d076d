/**
 * The wallets found in this browser (EIP-6963), plus the demo wallet in dev mode. Picking one
 * calls `onPick`; while it runs the buttons are disabled and the error, if any, is shown.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, asApiError } from '../lib/api';
import { pageConfig } from '../lib/config';
import { demoWallet } from '../lib/wallet/demo';
import { ErrorBox } from './states';
import { discovered, discoverWallets, walletErrorMessage, type WalletOption } from '../lib/wallet/provider';

/** `creator`: in dev mode, also offer to sign in as the demo creator (the sign-in page), not only the demo consumer. */
export function WalletPicker({
  onPick,
  action,
  creator = false,
}: {
  onPick: (wallet: WalletOption) => Promise<unknown>;
  action: string;
  creator?: boolean;
}) {
  const [busy, setBusy] = useState<string | undefined>();
  const [error, setError] = useState<unknown>();
  useEffect(discoverWallets, []);
  const config = pageConfig.value;
  const demos = config?.devMode
    ? [demoWallet(config.network.chainId), ...(creator ? [demoWallet(config.network.chainId, 'creator')] : [])]
    : [];
  const wallets = [...discovered.value, ...demos];
  const pick = async (wallet: WalletOption) => {
    setBusy(wallet.id);
    setError(undefined);
    try {
      await onPick(wallet);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(undefined);
    }
  };
  if (wallets.length === 0) {
    return (
      <div class="notice notice-empty" role="status">
        <strong>No wallet found in this browser</strong>
        <p class="muted">Install a browser wallet that supports EIP-6963 (MetaMask, Rabby, Coinbase Wallet…), then reload this page.</p>
      </div>
    );
  }
  return (
    <div>
      <ul class="wallet-list" aria-label="Wallets found in this browser">
        {wallets.map((wallet) => (
          <li key={wallet.id}>
            <button type="button" class="button wallet-button" disabled={busy !== undefined} onClick={() => pick(wallet)}>
              {wallet.icon ? (
                <img src={wallet.icon} alt="" width={24} height={24} />
              ) : (
                <span class="wallet-icon-placeholder" aria-hidden="true" />
              )}
              <span>
                {wallet.id === 'demo-creator' ? `${action} as` : `${action} with`} {wallet.name}
              </span>
              {busy === wallet.id && <span class="muted small"> — check your wallet…</span>}
            </button>
          </li>
        ))}
      </ul>
      {error !== undefined &&
        (error instanceof ApiError ? (
          <ErrorBox error={error} title={`Could not ${action.toLowerCase()}`} />
        ) : (
          <ErrorBox error={asApiError(new Error(walletErrorMessage(error)))} title={`Could not ${action.toLowerCase()}`} />
        ))}
    </div>
  );
}
