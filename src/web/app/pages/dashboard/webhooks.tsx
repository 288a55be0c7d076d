/**
 * Webhooks: endpoints that hear about paid calls and reviews. Adding one shows its signing secret
 * once; each endpoint can be turned off and on, sent a test event, removed, and opened to see its
 * latest deliveries with every attempt, each of which can be sent again.
 */
import { useEffect, useState } from 'preact/hooks';
import type { CreatedWebhook, WebhookEvent, WebhookView } from 'skill-market/registry';
import { Field } from '../../components/field';
import { CopyButton } from '../../components/copy-button';
import { ConfirmDialog, Dialog } from '../../components/dialog';
import { Empty, ErrorBox, Skeleton } from '../../components/states';
import { registry } from '../../lib/api';
import { date, dateTime } from '../../lib/format';
import { useAction } from '../../lib/use-action';
import { useResource } from '../../lib/use-resource';

const EVENTS = [
  { name: 'call.paid', label: 'A paid call (once its payment is verified on chain)' },
  { name: 'payment.reverted', label: 'A payment reported for your skill reverted on chain' },
  { name: 'receipt.mismatch', label: 'A call’s signed receipt names another amount than the chain shows paid' },
  { name: 'channel.claimed', label: 'Calls paid over a payment channel were claimed on chain' },
  { name: 'channel.settled', label: 'Claimed channel payments were settled to your address' },
  { name: 'review.created', label: 'A new review of one of your skills' },
  { name: 'key.revoked', label: 'One of your API keys was revoked' },
  { name: 'skill.down', label: 'The server of your skills stopped answering' },
  { name: 'skill.up', label: 'It answers again' },
  { name: 'skill.hidden', label: 'The operators hid one of your skills (with their reason)' },
  { name: 'skill.restored', label: 'The operators listed it again' },
  { name: 'creator.suspended', label: 'The operators suspended your account (with their reason)' },
  { name: 'creator.restored', label: 'The operators lifted the suspension' },
] as const;

function NewWebhook({ onClose, onCreated }: { onClose: () => void; onCreated: () => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['call.paid']);
  const [created, setCreated] = useState<CreatedWebhook | undefined>();
  const create = useAction();
  useEffect(() => {
    if (created) document.getElementById('new-webhook-secret')?.focus();
  }, [created]);
  const submit = async (event: Event) => {
    event.preventDefault();
    const made = await create.run(() => registry.createWebhook({ url: url.trim(), events: events as WebhookEvent[] }));
    if (made) {
      setCreated(made);
      onCreated();
    }
  };
  const toggle = (name: string, on: boolean) => setEvents((now) => (on ? [...now, name] : now.filter((e) => e !== name)));
  return (
    <Dialog title={created ? 'Your webhook secret' : 'New webhook'} onClose={onClose}>
      {created ? (
        <>
          <div class="notice notice-warn" role="alert">
            <strong>Copy it now: it is shown only this once.</strong>
            <p>
              Check each delivery with it: the <code>webhook-signature</code> header (Standard Webhooks), e.g.{' '}
              <code>new Webhook(secret).verify(body, headers)</code> of the <code>standardwebhooks</code> package.
            </p>
          </div>
          <div class="field">
            <label for="new-webhook-secret">Signing secret for {created.url}</label>
            <input
              id="new-webhook-secret"
              class="mono"
              readOnly
              value={created.secret}
              onFocus={(e) => (e.target as HTMLInputElement).select()}
            />
          </div>
          <div class="row dialog-actions">
            <CopyButton text={created.secret} label="Copy the secret" />
            <button type="button" class="button button-primary" onClick={onClose}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={submit}>
          <Field
            id="webhook-url"
            label="URL"
            type="url"
            required
            maxLength={2048}
            placeholder="https://example.com/hooks/market"
            value={url}
            onValue={setUrl}
            hint="An https address the internet can reach; each event is POSTed there as JSON."
          />
          <fieldset class="field">
            <legend>Events</legend>
            {EVENTS.map((e) => (
              <div class="field-check" key={e.name}>
                <input
                  type="checkbox"
                  id={`event-${e.name}`}
                  checked={events.includes(e.name)}
                  onChange={(ev) => toggle(e.name, (ev.target as HTMLInputElement).checked)}
                />
                <label for={`event-${e.name}`}>
                  <code>{e.name}</code>: {e.label}
                </label>
              </div>
            ))}
          </fieldset>
          {create.error && <ErrorBox error={create.error} title="Could not add the webhook" />}
          <div class="row dialog-actions">
            <button type="button" class="button" onClick={onClose}>
              Cancel
            </button>
            <button type="submit" class="button button-primary" disabled={create.busy || events.length === 0}>
              {create.busy ? 'Adding…' : 'Add webhook'}
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

/** The latest deliveries to one endpoint, each with its attempts and a "Send again". */
function Deliveries({ hook }: { hook: WebhookView }) {
  const [deliveries, retry] = useResource((signal) => registry.webhookDeliveries(hook.id, signal), [hook.id]);
  const resend = useAction();
  if (deliveries.state === 'loading') return <Skeleton lines={2} label="Loading the deliveries" />;
  if (deliveries.state === 'error') return <ErrorBox error={deliveries.error} title="Could not load the deliveries" retry={retry} />;
  if (deliveries.data.length === 0) return <p class="muted">No deliveries yet. Send a test event to see one.</p>;
  return (
    <>
      {resend.error && <ErrorBox error={resend.error} title="Could not send it again" />}
      <ul class="delivery-list">
        {deliveries.data.map((d) => (
          <li key={d.id} class="delivery">
            <div class="row">
              <code>{d.type}</code>
              <span class={`badge ${d.status === 'delivered' ? 'badge-ok' : d.status === 'failed' ? 'badge-warn' : ''}`}>{d.status}</span>
              <span class="muted">
                {dateTime(d.createdAt)}, {d.attempts} attempt{d.attempts === 1 ? '' : 's'}
                {d.nextAttemptAt ? `, next ${dateTime(d.nextAttemptAt)}` : ''}
              </span>
              <button
                type="button"
                class="button button-small"
                aria-label={`Send ${d.type} of ${dateTime(d.createdAt)} again`}
                disabled={resend.busy}
                onClick={async () => {
                  if ((await resend.run(() => registry.redeliverWebhook(hook.id, d.id))) !== undefined) retry();
                }}
              >
                Send again
              </button>
            </div>
            {d.log.length > 0 && (
              <ol class="attempts">
                {d.log.map((a) => (
                  <li key={a.at}>
                    {dateTime(a.at)}: {a.status === null ? 'no answer' : `HTTP ${a.status}`}
                    {a.latencyMs !== null ? ` in ${a.latencyMs} ms` : ''}
                    {a.excerpt ? <span class="muted"> — {a.excerpt}</span> : null}
                  </li>
                ))}
              </ol>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

function Endpoint({ hook, onChanged, onRemove }: { hook: WebhookView; onChanged: () => void; onRemove: () => void }) {
  const [open, setOpen] = useState(false);
  const act = useAction();
  const [shown, setShown] = useState(0); // a new test event: reload the deliveries
  return (
    <li class="card webhook">
      <div class="row">
        <code class="webhook-url">{hook.url}</code>
        <span class={`badge ${hook.enabled ? 'badge-ok' : 'badge-warn'}`}>{hook.enabled ? 'on' : 'off'}</span>
      </div>
      <p class="muted">
        {hook.events.join(', ')} · added {date(hook.createdAt)}
      </p>
      {hook.disabledReason && (
        <p class="notice notice-warn" role="status">
          {hook.disabledReason}
        </p>
      )}
      {act.error && <ErrorBox error={act.error} title="That did not work" />}
      <div class="row">
        <button
          type="button"
          class="button button-small"
          disabled={act.busy}
          onClick={async () => {
            if ((await act.run(() => registry.updateWebhook(hook.id, { enabled: !hook.enabled }))) !== undefined) onChanged();
          }}
        >
          {hook.enabled ? 'Turn off' : 'Turn on'}
        </button>
        <button
          type="button"
          class="button button-small"
          disabled={act.busy}
          onClick={async () => {
            if ((await act.run(() => registry.testWebhook(hook.id))) !== undefined) {
              setOpen(true);
              setShown((n) => n + 1);
            }
          }}
        >
          Send test event
        </button>
        <button type="button" class="button button-small" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Hide deliveries' : 'Deliveries'}
        </button>
        <button type="button" class="button button-small" aria-label={`Remove ${hook.url}`} onClick={onRemove}>
          Remove
        </button>
      </div>
      {open && <Deliveries key={shown} hook={hook} />}
    </li>
  );
}

export function WebhooksView() {
  const [hooks, retry] = useResource((signal) => registry.webhooks(signal), []);
  const [creating, setCreating] = useState(false);
  const [removing, setRemoving] = useState<WebhookView | undefined>();
  const remove = useAction();
  return (
    <>
      <p class="muted">
        Your own systems hear of paid calls and reviews as they happen: each event is signed, stored before it is sent, and retried for
        about a day.
      </p>
      <button type="button" class="button button-primary" onClick={() => setCreating(true)}>
        New webhook
      </button>
      {hooks.state === 'loading' && <Skeleton lines={3} label="Loading your webhooks" />}
      {hooks.state === 'error' && <ErrorBox error={hooks.error} title="Could not load your webhooks" retry={retry} />}
      {hooks.state === 'ready' && hooks.data.length === 0 && (
        <Empty title="No webhooks yet">Add one to hear of paid calls and reviews in your own systems.</Empty>
      )}
      {hooks.state === 'ready' && hooks.data.length > 0 && (
        <ul class="card-list">
          {hooks.data.map((h) => (
            <Endpoint
              key={h.id}
              hook={h}
              onChanged={retry}
              onRemove={() => {
                remove.clear();
                setRemoving(h);
              }}
            />
          ))}
        </ul>
      )}
      {creating && <NewWebhook onClose={() => setCreating(false)} onCreated={retry} />}
      {removing && (
        <ConfirmDialog
          title="Remove this webhook?"
          action="Remove the webhook"
          busy={remove.busy}
          onClose={() => setRemoving(undefined)}
          onConfirm={async () => {
            if ((await remove.run(() => registry.deleteWebhook(removing.id))) !== undefined) {
              setRemoving(undefined);
              retry();
            }
          }}
        >
          <p>
            Nothing more is sent to <code>{removing.url}</code>, and its delivery log goes with it.
          </p>
          {remove.error && <ErrorBox error={remove.error} title="Could not remove the webhook" />}
        </ConfirmDialog>
      )}
    </>
  );
}
