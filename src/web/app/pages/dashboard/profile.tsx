/** Profile: name, avatar and bio, as the creator page shows them (`PATCH /creators/me`). */
import { useState } from 'preact/hooks';
import { Field } from '../../components/field';
import { ErrorBox } from '../../components/states';
import { registry } from '../../lib/api';
import { account } from '../../lib/session';
import { useAction } from '../../lib/use-action';

export function ProfileView() {
  const me = account.value!;
  const [name, setName] = useState(me.name ?? '');
  const [avatar, setAvatar] = useState(me.avatar ?? '');
  const [bio, setBio] = useState(me.bio ?? '');
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    setSaved(false);
    const updated = await save.run(() =>
      registry.updateProfile({ name: name.trim() || null, avatar: avatar.trim() || null, bio: bio.trim() || null }),
    );
    if (updated) {
      account.value = updated;
      setSaved(true);
    }
  };
  return (
    <form class="narrow" onSubmit={submit}>
      <p class="muted small">
        Shown on <a href={`/creator/${me.walletAddress}`}>your public page</a> and beside your skills. Wallet{' '}
        <code class="break">{me.walletAddress}</code>
      </p>
      <Field id="profile-name" label="Name" maxLength={80} autoComplete="nickname" value={name} onValue={setName} />
      <Field
        id="profile-avatar"
        label="Avatar image address"
        type="url"
        maxLength={2048}
        placeholder="https://…"
        value={avatar}
        onValue={setAvatar}
      />
      <Field id="profile-bio" label="Bio" rows={4} maxLength={1000} value={bio} onValue={setBio} />
      {save.error && <ErrorBox error={save.error} title="Could not save your profile" />}
      <div class="row">
        <button type="submit" class="button button-primary" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save profile'}
        </button>
        <span role="status" class="saved-note">
          {saved ? 'Saved.' : ''}
        </span>
      </div>
    </form>
  );
}
