/**
 * My skills: every skill of mine (inactive ones too) with its counters, an active switch, and an
 * editor for description, price, free trial, volume prices, groups and schemas. A skill's name opens its analytics.
 */
import { useState } from 'preact/hooks';
import { Field } from '../../components/field';
import { ConfirmDialog, Dialog } from '../../components/dialog';
import { JsonEditor, readJson } from '../../components/json-editor';
import { Empty, ErrorBox, Skeleton } from '../../components/states';
import { registry } from '../../lib/api';
import { count, usdc } from '../../lib/format';
import { pageConfig } from '../../lib/config';
import { account } from '../../lib/session';
import { standing } from '../../lib/standing';
import type { GroupView as Group, SkillView as Skill } from 'skill-market/registry';
import { useAction } from '../../lib/use-action';
import { useResource } from '../../lib/use-resource';
import { SkillAnalytics } from './skill-analytics';
import { usePlansEditor } from './skill-plans';

const pretty = (schema: Record<string, unknown> | null) => (schema ? JSON.stringify(schema, null, 2) : '');

function EditSkill({ skill, groups, onClose, onSaved }: { skill: Skill; groups: Group[]; onClose: () => void; onSaved: () => void }) {
  const [description, setDescription] = useState(skill.description ?? '');
  const [price, setPrice] = useState(skill.price.replace(/^\$/, ''));
  const [chosen, setChosen] = useState(
    new Set(groups.filter((g) => skill.groups.includes(g.slug) || skill.groups.includes(g.name)).map((g) => g.slug)),
  );
  const [input, setInput] = useState(pretty(skill.inputSchema));
  const [output, setOutput] = useState(pretty(skill.outputSchema));
  const plans = usePlansEditor(skill, price);
  const save = useAction();
  const inputRead = readJson(input);
  const outputRead = readJson(output);
  const problem =
    !inputRead.ok || !outputRead.ok
      ? 'Fix the schema marked above before saving.'
      : chosen.size === 0
        ? 'Choose at least one group.'
        : plans.edit.problem;
  const submit = async (event: Event) => {
    event.preventDefault();
    if (problem || !inputRead.ok || !outputRead.ok) return;
    const body = {
      description: description.trim() || null,
      price,
      groups: [...chosen],
      inputSchema: inputRead.value,
      outputSchema: outputRead.value,
      ...plans.edit.body,
    };
    if ((await save.run(() => registry.updateSkill(skill.slug, body))) !== undefined) onSaved();
  };
  return (
    <Dialog title={`Edit ${skill.name}`} onClose={onClose}>
      <form onSubmit={submit}>
        <Field id="edit-description" label="Description" rows={3} maxLength={2000} value={description} onValue={setDescription} />
        <Field
          id="edit-price"
          label={skill.usageBased ? 'Most per call (USDC), charged by use' : 'Price per call (USDC)'}
          inputMode="decimal"
          required
          pattern="\$?[0-9]+(\.[0-9]{1,6})?"
          value={price}
          onValue={setPrice}
          hint="Up to 6 decimals, e.g. 0.001"
        />
        {plans.fields}
        <fieldset class="field">
          <legend>Groups</legend>
          {groups.length === 0 && <p class="muted small">You have no groups yet: create one under Groups.</p>}
          {groups.map((g) => (
            <div class="field-check" key={g.slug}>
              <input
                type="checkbox"
                id={`edit-group-${g.slug}`}
                checked={chosen.has(g.slug)}
                onChange={(e) => {
                  const next = new Set(chosen);
                  if ((e.target as HTMLInputElement).checked) next.add(g.slug);
                  else next.delete(g.slug);
                  setChosen(next);
                }}
              />
              <label for={`edit-group-${g.slug}`}>
                {g.icon && !g.icon.startsWith('http') ? `${g.icon} ` : ''}
                {g.name}
              </label>
            </div>
          ))}
        </fieldset>
        <JsonEditor id="edit-input-schema" label="Input schema (JSON Schema)" value={input} onInput={setInput} />
        <JsonEditor id="edit-output-schema" label="Output schema (JSON Schema)" value={output} onInput={setOutput} />
        {problem && <p class="field-error">{problem}</p>}
        {save.error && <ErrorBox error={save.error} title="Could not save the skill" />}
        <div class="row dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="button button-primary" disabled={save.busy || problem !== undefined}>
            {save.busy ? 'Saving…' : 'Save'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function ActiveSwitch({ skill, onChanged }: { skill: Skill; onChanged: () => void }) {
  const [confirm, setConfirm] = useState(false);
  const action = useAction();
  const set = async (isActive: boolean) => {
    if ((await action.run(() => registry.updateSkill(skill.slug, { isActive }))) !== undefined) {
      setConfirm(false);
      onChanged();
    }
  };
  return (
    <>
      <button
        type="button"
        role="switch"
        class="switch"
        aria-checked={skill.isActive}
        aria-label={`${skill.name} listed`}
        disabled={action.busy}
        onClick={() => (skill.isActive ? setConfirm(true) : set(true))}
      >
        <span aria-hidden="true">{skill.isActive ? 'On' : 'Off'}</span>
      </button>
      {action.error && !confirm && <ErrorBox error={action.error} title="Could not change the skill" />}
      {confirm && (
        <ConfirmDialog
          title={`Pause ${skill.name}?`}
          action="Pause the skill"
          busy={action.busy}
          onConfirm={() => set(false)}
          onClose={() => setConfirm(false)}
        >
          <p>
            It leaves the marketplace until you switch it on again. Its server keeps running; calls from people who know the URL still pay.
          </p>
          {action.error && <ErrorBox error={action.error} title="Could not pause the skill" />}
        </ConfirmDialog>
      )}
    </>
  );
}

/** A listing not public yet: its server has not answered the marketplace's health check. */
function FirstCheckNote({ skill }: { skill: Skill }) {
  if (!pageConfig.value?.listAfterFirstCheck || skill.lastUpAt !== null) return null;
  return (
    <div class="small first-check-note">
      <span class="badge">waiting for the first check</span> listed once your server answers the marketplace's health check
    </div>
  );
}

/** A skill the operators hid: out of the marketplace, with their reason. */
function HiddenNote({ slug }: { slug: string }) {
  const hidden = standing.value?.hiddenSkills.find((h) => h.slug === slug);
  if (!hidden) return null;
  return (
    <div class="small hidden-note">
      <span class="badge badge-warn">hidden</span> by the operators: {hidden.reason}
    </div>
  );
}

export function SkillsView({ rest }: { rest: string[] }) {
  const me = account.value!;
  const [data, retry] = useResource(
    async (signal) => {
      const [skills, groups] = await Promise.all([registry.ownSkills(signal), registry.groups(me.walletAddress, signal)]);
      return { skills, groups };
    },
    [me.walletAddress],
  );
  const [editing, setEditing] = useState<Skill | undefined>();
  if (rest[0]) return <SkillAnalytics slug={rest[0]} />;
  if (data.state === 'loading') return <Skeleton lines={5} label="Loading your skills" />;
  if (data.state === 'error') return <ErrorBox error={data.error} title="Could not load your skills" retry={retry} />;
  const { skills, groups } = data.data;
  if (skills.length === 0) {
    return (
      <Empty title="No skills yet">
        Write a skill with the SDK and publish it with <code>market serve</code> and a creator API key (make one under{' '}
        <a href="/dashboard/keys">API keys</a>).
      </Empty>
    );
  }
  return (
    <>
      <p class="muted">
        Revenue counts payments verified on chain.{' '}
        <a href="/analytics/revenue.csv" download="revenue.csv">
          Download your revenue per skill and day (CSV)
        </a>
      </p>
      <div class="table-wrap">
        <table class="data-table cards">
          <caption class="visually-hidden">Your skills</caption>
          <thead>
            <tr>
              <th scope="col">Skill</th>
              <th scope="col" class="num">
                Price
              </th>
              <th scope="col" class="num">
                Calls
              </th>
              <th scope="col" class="num">
                Views
              </th>
              <th scope="col" class="num">
                Favourites
              </th>
              <th scope="col" class="num">
                Revenue
              </th>
              <th scope="col">Listed</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {skills.map((s) => (
              <tr key={s.id}>
                <th scope="row">
                  <a href={`/dashboard/skills/${encodeURIComponent(s.slug)}`} title="Analytics">
                    {s.name}
                  </a>
                  <div class="muted small">{s.groups.join(', ')}</div>
                  <HiddenNote slug={s.slug} />
                  <FirstCheckNote skill={s} />
                </th>
                <td class="num" data-label="Price">
                  {s.usageBased && <span class="muted small">up to </span>}
                  {usdc(s.price)}
                </td>
                <td class="num" data-label="Calls">
                  {count(s.callCount)}
                </td>
                <td class="num" data-label="Views">
                  {count(s.viewCount)}
                </td>
                <td class="num" data-label="Favourites">
                  {count(s.favoriteCount)}
                </td>
                <td class="num" data-label="Revenue">
                  {usdc(s.totalRevenue)}
                </td>
                <td data-label="Listed">
                  <ActiveSwitch skill={s} onChanged={retry} />
                </td>
                <td>
                  <button type="button" class="button button-small" onClick={() => setEditing(s)} aria-label={`Edit ${s.name}`}>
                    Edit
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {editing && (
        <EditSkill
          skill={editing}
          groups={groups}
          onClose={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            retry();
          }}
        />
      )}
    </>
  );
}
