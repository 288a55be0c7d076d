/**
 * API keys: create one (creator `sk_` or consumer `ck_`), shown once with a copy button and a
 * warning; the list shows the prefix and last use; revoking asks first.
 */
import { useEffect, useState } from 'preact/hooks';
import { Field } from '../../components/field';
import { CopyButton } from '../../components/copy-button';
import { ConfirmDialog, Dialog } from '../../components/dialog';
import { Empty, ErrorBox, Skeleton } from '../../components/states';
import type { ApiKeyView as ApiKey, CreatedApiKey } from 'skill-market/registry';
import { registry } from '../../lib/api';
import { date } from '../../lib/format';
import { useAction } from '../../lib/use-action';
import { useResource } from '../../lib/use-resource';

function NewKey({ onClose, onCreated }: { onClose: () => void; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState<'creator' | 'consumer'>('creator');
  const [created, setCreated] = useState<CreatedApiKey | undefined>();
  const create = useAction();
  // The form is gone: focus goes to the key, selected, ready to copy.
  useEffect(() => {
    if (created) document.getElementById('new-key-value')?.focus();
  }, [created]);
  const submit = async (event: Event) => {
    event.preventDefault();
    const key = await create.run(() => registry.createApiKey({ name: name.trim(), type }));
    if (key) {
      setCreated(key);
      onCreated();
    }
  };
  // One dialog for both steps: the key replaces the form in place (the dialog stays open, focus inside).
  return (
    <Dialog title={created ? 'Your new API key' : 'New API key'} onClose={onClose}>
      {created ? (
        <>
          <div class="notice notice-warn" role="alert">
            <strong>Copy it now: it is shown only this once.</strong>
            <p>The registry keeps only a hash. Anyone with this key acts as you: keep it out of code you share.</p>
          </div>
          <div class="field">
            <label for="new-key-value">
              {created.type === 'creator' ? 'Creator key' : 'Consumer key'} “{created.name}”
            </label>
            <input id="new-key-value" class="mono" readOnly value={created.key} onFocus={(e) => (e.target as HTMLInputElement).select()} />
          </div>
          <div class="row dialog-actions">
            <CopyButton text={created.key} label="Copy the key" />
            <button type="button" class="button button-primary" onClick={onClose}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={submit}>
          <Field id="key-name" label="Name" required maxLength={80} placeholder="e.g. laptop, CI" value={name} onValue={setName} />
          <fieldset class="field">
            <legend>Type</legend>
            <div class="field-check">
              <input type="radio" id="key-type-creator" name="key-type" checked={type === 'creator'} onChange={() => setType('creator')} />
              <label for="key-type-creator">Creator (sk_): publish skills, record calls</label>
            </div>
            <div class="field-check">
              <input
                type="radio"
                id="key-type-consumer"
                name="key-type"
                checked={type === 'consumer'}
                onChange={() => setType('consumer')}
              />
              <label for="key-type-consumer">Consumer (ck_): spending wallets, usage</label>
            </div>
          </fieldset>
          {create.error && <ErrorBox error={create.error} title="Could not create the key" />}
          <div class="row dialog-actions">
            <button type="button" class="button" onClick={onClose}>
              Cancel
            </button>
            <button type="submit" class="button button-primary" disabled={create.busy}>
              {create.busy ? 'Creating…' : 'Create key'}
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

export function KeysView() {
  const [keys, retry] = useResource((signal) => registry.apiKeys(signal), []);
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<ApiKey | undefined>();
  const revoke = useAction();
  return (
    <>
      <p class="muted">
        Keys let <code>market serve</code>, the SDK and scripts act for you without a browser. A creator key publishes skills; a consumer
        key pays and records usage.
      </p>
      <button type="button" class="button button-primary" onClick={() => setCreating(true)}>
        New API key
      </button>
      {keys.state === 'loading' && <Skeleton lines={3} label="Loading your API keys" />}
      {keys.state === 'error' && <ErrorBox error={keys.error} title="Could not load your API keys" retry={retry} />}
      {keys.state === 'ready' && keys.data.length === 0 && <Empty title="No API keys yet">Create one for market serve or the SDK.</Empty>}
      {keys.state === 'ready' && keys.data.length > 0 && (
        <div class="table-wrap">
          <table class="data-table cards">
            <caption class="visually-hidden">Your API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.map((k) => (
                <tr key={k.id} class={k.revokedAt ? 'revoked' : undefined}>
                  <th scope="row">{k.name}</th>
                  <td data-label="Type">{k.type}</td>
                  <td data-label="Key">
                    <code>{k.keyPrefix}…</code>
                  </td>
                  <td data-label="Created">{date(k.createdAt)}</td>
                  <td data-label="Last used">{k.lastUsedAt ? date(k.lastUsedAt) : <span class="muted">never</span>}</td>
                  <td>
                    {k.revokedAt ? (
                      <span class="badge badge-warn">revoked</span>
                    ) : (
                      <button
                        type="button"
                        class="button button-small"
                        aria-label={`Revoke ${k.name}`}
                        onClick={() => {
                          revoke.clear();
                          setRevoking(k);
                        }}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {creating && <NewKey onClose={() => setCreating(false)} onCreated={retry} />}
      {revoking && (
        <ConfirmDialog
          title={`Revoke ${revoking.name}?`}
          action="Revoke the key"
          busy={revoke.busy}
          onClose={() => setRevoking(undefined)}
          onConfirm={async () => {
            if ((await revoke.run(() => registry.revokeApiKey(revoking.id))) !== undefined) {
              setRevoking(undefined);
              retry();
            }
          }}
        >
          <p>
            Everything using <code>{revoking.keyPrefix}…</code> is refused from now on. This cannot be undone.
          </p>
          {revoke.error && <ErrorBox error={revoke.error} title="Could not revoke the key" />}
        </ConfirmDialog>
      )}
    </>
  );
}
