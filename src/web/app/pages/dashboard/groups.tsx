/** Groups: create, rename, change the icon, delete (refused with 409 while a skill uses the group). */
import { useState } from 'preact/hooks';
import { Field } from '../../components/field';
import { ConfirmDialog, Dialog } from '../../components/dialog';
import { Empty, ErrorBox, Skeleton } from '../../components/states';
import { registry } from '../../lib/api';
import { account } from '../../lib/session';
import type { GroupView as Group } from 'skill-market/registry';
import { useAction } from '../../lib/use-action';
import { useResource } from '../../lib/use-resource';

function GroupIcon({ icon }: { icon: string | null }) {
  if (!icon) return <span class="group-icon" aria-hidden="true" />;
  if (/^https?:\/\//.test(icon)) return <img class="group-icon" src={icon} alt="" width={28} height={28} />;
  return (
    <span class="group-icon" aria-hidden="true">
      {icon}
    </span>
  );
}

function GroupForm({ group, onClose, onSaved }: { group?: Group; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState(group?.name ?? '');
  const [icon, setIcon] = useState(group?.icon ?? '');
  const [description, setDescription] = useState(group?.description ?? '');
  const save = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const done = await save.run(() =>
      group
        ? registry.updateGroup(group.slug, { name: name.trim(), icon: icon.trim() || null, description: description.trim() || null })
        : registry.createGroup({
            name: name.trim(),
            ...(icon.trim() ? { icon: icon.trim() } : {}),
            ...(description.trim() ? { description: description.trim() } : {}),
          }),
    );
    if (done !== undefined) onSaved();
  };
  return (
    <Dialog title={group ? `Edit ${group.name}` : 'New group'} onClose={onClose}>
      <form onSubmit={submit}>
        <Field id="group-name" label="Name" required maxLength={60} value={name} onValue={setName} />
        <Field
          id="group-icon"
          label="Icon"
          maxLength={2048}
          value={icon}
          onValue={setIcon}
          hint="An emoji, or the https address of an image. Optional."
        />
        <Field id="group-description" label="Description" rows={2} maxLength={500} value={description} onValue={setDescription} />
        {save.error && <ErrorBox error={save.error} title={group ? 'Could not save the group' : 'Could not create the group'} />}
        <div class="row dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="button button-primary" disabled={save.busy}>
            {save.busy ? 'Saving…' : group ? 'Save' : 'Create group'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export function GroupsView() {
  const me = account.value!;
  const [groups, retry] = useResource((signal) => registry.groups(me.walletAddress, signal), [me.walletAddress]);
  const [editing, setEditing] = useState<Group | 'new' | undefined>();
  const [deleting, setDeleting] = useState<Group | undefined>();
  const remove = useAction();
  const saved = () => {
    setEditing(undefined);
    retry();
  };
  return (
    <>
      <p class="muted">Groups sort your skills on the marketplace. Every skill is in at least one of your groups.</p>
      <button type="button" class="button button-primary" onClick={() => setEditing('new')}>
        New group
      </button>
      {groups.state === 'loading' && <Skeleton lines={3} label="Loading your groups" />}
      {groups.state === 'error' && <ErrorBox error={groups.error} title="Could not load your groups" retry={retry} />}
      {groups.state === 'ready' && groups.data.length === 0 && (
        <Empty title="No groups yet">Create one to publish your first skill in it.</Empty>
      )}
      {groups.state === 'ready' && groups.data.length > 0 && (
        <ul class="item-list" aria-label="Your groups">
          {groups.data.map((g) => (
            <li key={g.id} class="item">
              <GroupIcon icon={g.icon} />
              <div class="item-main">
                <strong>{g.name}</strong> <span class="muted small mono">{g.slug}</span>
                {g.description && <div class="small muted">{g.description}</div>}
              </div>
              <div class="item-actions">
                <button type="button" class="button button-small" onClick={() => setEditing(g)} aria-label={`Edit ${g.name}`}>
                  Edit
                </button>
                <button
                  type="button"
                  class="button button-small"
                  onClick={() => {
                    remove.clear();
                    setDeleting(g);
                  }}
                  aria-label={`Delete ${g.name}`}
                >
                  Delete
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {editing && <GroupForm group={editing === 'new' ? undefined : editing} onClose={() => setEditing(undefined)} onSaved={saved} />}
      {deleting && (
        <ConfirmDialog
          title={`Delete ${deleting.name}?`}
          action="Delete the group"
          busy={remove.busy}
          onClose={() => setDeleting(undefined)}
          onConfirm={async () => {
            if ((await remove.run(() => registry.deleteGroup(deleting.slug))) !== undefined) {
              setDeleting(undefined);
              retry();
            }
          }}
        >
          <p>The group goes away for good. A group that a skill still uses cannot be deleted: move the skill first.</p>
          {remove.error && (
            <ErrorBox
              error={remove.error}
              title={remove.error.status === 409 ? 'This group is still in use' : 'Could not delete the group'}
            />
          )}
        </ConfirmDialog>
      )}
    </>
  );
}
