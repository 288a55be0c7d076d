/**
 * Spending wallets. A new one is made in this page: viem generates the key, the page encrypts it
 * into a v3 keystore file under the user's passphrase and downloads it, and only the address goes
 * to the registry. The list shows each wallet's live USDC balance; labels; revoke asks first.
 */
import { useState } from 'preact/hooks';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { encryptKeystore, MIN_PASSPHRASE_LENGTH } from 'skill-market/wallet';
import { Field } from '../../components/field';
import { ConfirmDialog, Dialog } from '../../components/dialog';
import { Empty, ErrorBox, Skeleton } from '../../components/states';
import type { ActiveWallet, WalletView } from 'skill-market/registry';
import { pageJson, registry } from '../../lib/api';
import { pageConfig } from '../../lib/config';
import { date, usdc } from '../../lib/format';
import { useAction } from '../../lib/use-action';
import { useResource } from '../../lib/use-resource';

/** A wallet in the list: live balance for wallets in use, none for revoked ones. */
type LiveWallet = WalletView & Partial<ActiveWallet>;

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function NewWallet({ onClose, onCreated }: { onClose: () => void; onCreated: () => void }) {
  const [label, setLabel] = useState('');
  const [passphrase, setPassphrase] = useState('');
  const [again, setAgain] = useState('');
  const [stage, setStage] = useState<string | undefined>();
  const [done, setDone] = useState<{ address: string; file: string } | undefined>();
  const create = useAction();
  const tooShort = passphrase.length > 0 && passphrase.length < MIN_PASSPHRASE_LENGTH;
  const mismatch = again.length > 0 && again !== passphrase;
  const submit = async (event: Event) => {
    event.preventDefault();
    if (passphrase.length < MIN_PASSPHRASE_LENGTH || again !== passphrase) return;
    const result = await create.run(async () => {
      setStage('Encrypting the key (this takes a few seconds)…');
      const privateKey = generatePrivateKey();
      const account = privateKeyToAccount(privateKey);
      const address = account.address;
      const keystore = await encryptKeystore(privateKey, passphrase);
      const file = `UTC--${new Date().toISOString().replace(/:/g, '-')}--${address.slice(2).toLowerCase()}.json`;
      // The file is saved before the registry hears of the address, so a wallet is never listed without its key.
      download(file, JSON.stringify(keystore));
      setStage('Registering the address…');
      // The new key signs the registry's message: the wallet is proven yours (its payments let you review).
      const { message } = await registry.walletChallenge(address);
      const proof = { message, signature: await account.signMessage({ message }) };
      await registry.registerWallet({ address, proof, ...(label.trim() ? { label: label.trim() } : {}) });
      return { address, file };
    });
    setStage(undefined);
    if (result) {
      setDone(result);
      onCreated();
    }
  };
  if (done) {
    return (
      <Dialog title="Wallet created" onClose={onClose}>
        <p>
          Your browser saved <code class="break">{done.file}</code>: the key, encrypted with your passphrase. Keep the file and the
          passphrase safe: without both, the funds in this wallet are lost. The registry knows only the address.
        </p>
        <p>
          Address{' '}
          <code class="break" data-testid="new-wallet-address">
            {done.address}
          </code>
          . Send USDC to it to pay for calls, and use the file with <code>market call --keystore</code> or the SDK.
        </p>
        <div class="row dialog-actions">
          <button type="button" class="button button-primary" onClick={onClose}>
            Done
          </button>
        </div>
      </Dialog>
    );
  }
  return (
    <Dialog title="New spending wallet" onClose={onClose}>
      <form onSubmit={submit}>
        <p class="small muted">The key is made in this page and downloaded as an encrypted keystore file. It never leaves your computer.</p>
        <Field id="wallet-label" label="Label" maxLength={64} placeholder="e.g. agents" value={label} onValue={setLabel} />
        <Field
          id="wallet-passphrase"
          label="Passphrase"
          type="password"
          required
          autoComplete="new-password"
          minLength={MIN_PASSPHRASE_LENGTH}
          value={passphrase}
          onValue={setPassphrase}
          hint={`At least ${MIN_PASSPHRASE_LENGTH} characters. It encrypts the file; nobody can recover it for you.`}
          error={tooShort && 'Too short.'}
        />
        <Field
          id="wallet-passphrase-again"
          label="Passphrase again"
          type="password"
          required
          autoComplete="new-password"
          value={again}
          onValue={setAgain}
          hint={!mismatch && 'Type it once more.'}
          error={mismatch && 'The two passphrases differ.'}
        />
        {stage && (
          <p role="status" class="small">
            {stage}
          </p>
        )}
        {create.error && <ErrorBox error={create.error} title="Could not create the wallet" />}
        <div class="row dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="submit"
            class="button button-primary"
            disabled={create.busy || passphrase.length < MIN_PASSPHRASE_LENGTH || again !== passphrase}
          >
            {create.busy ? 'Creating…' : 'Create and download'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function LabelForm({ wallet, onClose, onSaved }: { wallet: WalletView; onClose: () => void; onSaved: () => void }) {
  const [label, setLabel] = useState(wallet.label ?? '');
  const save = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    if ((await save.run(() => registry.setWalletLabel(wallet.address, label.trim() || null))) !== undefined) onSaved();
  };
  return (
    <Dialog title="Label the wallet" onClose={onClose}>
      <form onSubmit={submit}>
        <Field id="label-input" label="Label" maxLength={64} value={label} onValue={setLabel} hint="Empty clears it." />
        {save.error && <ErrorBox error={save.error} title="Could not save the label" />}
        <div class="row dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="button button-primary" disabled={save.busy}>
            Save
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function Balance({ wallet }: { wallet: LiveWallet }) {
  if (wallet.revokedAt) return <span class="muted">—</span>;
  if (wallet.balance === null)
    return (
      <span class="muted" title={wallet.balanceError}>
        unavailable
      </span>
    );
  return <span data-testid="wallet-balance">{usdc(BigInt(wallet.balanceAtomic ?? '0'))} USDC</span>;
}

export function WalletsView() {
  const [wallets, retry] = useResource(async (signal) => {
    const all = await registry.wallets(signal);
    // Live balances for the wallets in use; revoked ones are shown without.
    return Promise.all(
      all.map((w) => (w.revokedAt ? ({ ...w, balance: null, balanceAtomic: null } as LiveWallet) : registry.wallet(w.address, signal))),
    );
  }, []);
  const [creating, setCreating] = useState(false);
  const [labelling, setLabelling] = useState<WalletView | undefined>();
  const [revoking, setRevoking] = useState<WalletView | undefined>();
  const revoke = useAction();
  const fund = useAction();
  return (
    <>
      <p class="muted">
        Wallets your agents and scripts pay from. Their keys stay with you; the registry keeps the address to show balances.
      </p>
      <button type="button" class="button button-primary" onClick={() => setCreating(true)}>
        New wallet
      </button>
      {fund.error && <ErrorBox error={fund.error} title="Could not add test USDC" />}
      {wallets.state === 'loading' && <Skeleton lines={3} label="Loading your wallets" />}
      {wallets.state === 'error' && <ErrorBox error={wallets.error} title="Could not load your wallets" retry={retry} />}
      {wallets.state === 'ready' && wallets.data.length === 0 && (
        <Empty title="No spending wallets yet">Create one: the key is made in this page.</Empty>
      )}
      {wallets.state === 'ready' && wallets.data.length > 0 && (
        <ul class="item-list" aria-label="Your spending wallets">
          {wallets.data.map((w) => (
            <li key={w.id} class={w.revokedAt ? 'item revoked' : 'item'}>
              <div class="item-main">
                <strong>{w.label ?? 'Unlabelled'}</strong>
                {w.isActive && <span class="badge">active</span>}
                {w.revokedAt && <span class="badge badge-warn">revoked</span>}
                <div class="mono small break">{w.address}</div>
                <div class="small muted">
                  Created {date(w.createdAt)}
                  {w.lastUsedAt ? ` · last used ${date(w.lastUsedAt)}` : ''}
                </div>
              </div>
              <div class="item-balance">
                <Balance wallet={w} />
              </div>
              {!w.revokedAt && (
                <div class="item-actions">
                  {pageConfig.value?.devMode && (
                    // A local marketplace mints test USDC to any wallet: money to try paying with.
                    <button
                      type="button"
                      class="button button-small"
                      aria-label={`Add $10 test USDC to ${w.label ?? w.address}`}
                      disabled={fund.busy}
                      onClick={async () => {
                        if ((await fund.run(() => pageJson('/dev/fund', { address: w.address }))) !== undefined) retry();
                      }}
                    >
                      Add $10 test USDC
                    </button>
                  )}
                  <button
                    type="button"
                    class="button button-small"
                    aria-label={`Label ${w.label ?? w.address}`}
                    onClick={() => setLabelling(w)}
                  >
                    Label
                  </button>
                  <button
                    type="button"
                    class="button button-small"
                    aria-label={`Revoke ${w.label ?? w.address}`}
                    onClick={() => {
                      revoke.clear();
                      setRevoking(w);
                    }}
                  >
                    Revoke
                  </button>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      {creating && <NewWallet onClose={() => setCreating(false)} onCreated={retry} />}
      {labelling && (
        <LabelForm
          wallet={labelling}
          onClose={() => setLabelling(undefined)}
          onSaved={() => {
            setLabelling(undefined);
            retry();
          }}
        />
      )}
      {revoking && (
        <ConfirmDialog
          title="Revoke this wallet?"
          action="Revoke the wallet"
          busy={revoke.busy}
          onClose={() => setRevoking(undefined)}
          onConfirm={async () => {
            if ((await revoke.run(() => registry.revokeWallet(revoking.address))) !== undefined) {
              setRevoking(undefined);
              retry();
            }
          }}
        >
          <p>
            The registry stops using <code class="break">{revoking.address}</code>. The funds stay in it: your keystore file still opens it.
          </p>
          {revoke.error && <ErrorBox error={revoke.error} title="Could not revoke the wallet" />}
        </ConfirmDialog>
      )}
    </>
  );
}
