/**
 * Report a skill or a creator to the operators: for a signed-in visitor who is not that creator, a
 * dialog with a category and what is wrong (POST /reports). One open report per skill (or
 * creator): a second is answered 409, shown as the registry says it.
 */
import { useState } from 'preact/hooks';
import { REGISTRY_ROUTES, type ReportCategory } from 'skill-market/registry';
import { registry } from '../lib/api';
import { account } from '../lib/session';
import { useAction } from '../lib/use-action';
import { Dialog } from './dialog';
import { Field } from './field';
import { ErrorBox } from './states';

const CATEGORIES: { value: ReportCategory; label: string }[] = [
  { value: 'scam', label: 'Scam: takes payment, gives nothing back' },
  { value: 'malware', label: 'Malware or phishing' },
  { value: 'spam', label: 'Spam or a duplicate listing' },
  { value: 'impersonation', label: 'Impersonates someone' },
  { value: 'illegal', label: 'Illegal content' },
  { value: 'broken', label: 'Broken: never answers as described' },
  { value: 'other', label: 'Something else' },
];

/** What is reported: a skill by its slug (made by `creatorAddress`), or the creator `creatorAddress` themselves. */
export function ReportButton({ slug, creatorAddress, name }: { slug?: string; creatorAddress: string | undefined; name: string }) {
  const [open, setOpen] = useState(false);
  const [category, setCategory] = useState<ReportCategory>('scam');
  const [text, setText] = useState('');
  const [sent, setSent] = useState(false);
  const send = useAction();
  const me = account.value;
  if (!me || me.walletAddress === creatorAddress) return null;
  const submit = async (event: Event) => {
    event.preventDefault();
    const body = slug ? { skillSlug: slug, category, text: text.trim() } : { creatorAddress, category, text: text.trim() };
    if ((await send.run(() => registry.call(REGISTRY_ROUTES.postReport, { body }))) !== undefined) setSent(true);
  };
  const close = () => {
    setOpen(false);
    send.clear();
  };
  return (
    <>
      <button type="button" class="button button-small" onClick={() => setOpen(true)} disabled={sent}>
        {sent ? 'Reported' : 'Report'}
      </button>
      {open && (
        <Dialog title={`Report ${name}`} onClose={close}>
          {sent ? (
            <>
              <p role="status">Thank you: the marketplace’s operators will look at your report.</p>
              <div class="row dialog-actions">
                <button type="button" class="button button-primary" onClick={close}>
                  Done
                </button>
              </div>
            </>
          ) : (
            <form onSubmit={submit}>
              <div class="field">
                <label for="report-category">What is wrong</label>
                <select
                  id="report-category"
                  value={category}
                  onChange={(e) => setCategory((e.target as HTMLSelectElement).value as ReportCategory)}
                >
                  {CATEGORIES.map((c) => (
                    <option key={c.value} value={c.value}>
                      {c.label}
                    </option>
                  ))}
                </select>
              </div>
              <Field
                id="report-text"
                label="Details for the operators"
                rows={4}
                required
                maxLength={2000}
                value={text}
                onValue={setText}
                hint="What happened, and when. Only the operators read it."
              />
              {send.error && <ErrorBox error={send.error} title="Could not send the report" />}
              <div class="row dialog-actions">
                <button type="button" class="button" onClick={close}>
                  Cancel
                </button>
                <button type="submit" class="button button-primary" disabled={send.busy || text.trim() === ''}>
                  {send.busy ? 'Sending…' : 'Send the report'}
                </button>
              </div>
            </form>
          )}
        </Dialog>
      )}
    </>
  );
}
