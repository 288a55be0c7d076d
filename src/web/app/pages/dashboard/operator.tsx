/**
 * Operator (shown to the accounts of OPERATOR_ADDRESSES only): the report queue, each report with
 * the listing, its health, its buyers and earlier actions; hiding a skill or suspending its creator
 * and undoing either, always with a reason; and the audit log with its export (CSV, JSON lines).
 */
import { useState } from 'preact/hooks';
import { type AuditEntry, type QueueItem, REGISTRY_ROUTES } from 'skill-market/registry';
import { Dialog } from '../../components/dialog';
import { Field } from '../../components/field';
import { Empty, ErrorBox, Skeleton } from '../../components/states';
import { registry } from '../../lib/api';
import { count, dateTime, shortAddress } from '../../lib/format';
import { useAction } from '../../lib/use-action';
import { useResource } from '../../lib/use-resource';

const r = REGISTRY_ROUTES;

/** One decision the operator may take from the queue or the direct form. */
type Decision =
  | { kind: 'hide' | 'restore-skill'; slug: string; label: string; reportId?: string }
  | { kind: 'suspend' | 'restore-creator'; address: string; label: string; reportId?: string }
  | { kind: 'dismiss'; reportId: string; label: string };

const TITLES: Record<Decision['kind'], string> = {
  hide: 'Hide the skill',
  'restore-skill': 'List the skill again',
  suspend: 'Suspend the creator',
  'restore-creator': 'Lift the suspension',
  dismiss: 'Dismiss the report',
};

const EFFECTS: Record<Decision['kind'], string> = {
  hide: 'It leaves search, discovery and its page. Its creator sees it hidden with your reason and gets a webhook. Nothing is deleted.',
  'restore-skill': 'It is listed again where it was. Its creator is told.',
  suspend: 'Every skill of the creator is hidden and their writes are refused; they can still sign in and read your reason.',
  'restore-creator': 'Their skills are listed again and they may write again.',
  dismiss: 'The report is closed without action.',
};

function send(decision: Decision, reason: string): Promise<AuditEntry> {
  const body = { reason, ...(decision.kind !== 'dismiss' && decision.reportId ? { reportId: decision.reportId } : {}) };
  switch (decision.kind) {
    case 'hide':
      return registry.call(r.hideSkill, { params: { slug: decision.slug }, body });
    case 'restore-skill':
      return registry.call(r.restoreSkill, { params: { slug: decision.slug }, body });
    case 'suspend':
      return registry.call(r.suspendCreator, { params: { address: decision.address }, body });
    case 'restore-creator':
      return registry.call(r.restoreCreator, { params: { address: decision.address }, body });
    case 'dismiss':
      return registry.call(r.dismissReport, { params: { id: decision.reportId }, body: { reason } });
  }
}

function DecisionDialog({ decision, onClose, onDone }: { decision: Decision; onClose: () => void; onDone: () => void }) {
  const [reason, setReason] = useState('');
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    if ((await action.run(() => send(decision, reason.trim()))) !== undefined) onDone();
  };
  const destructive = decision.kind === 'hide' || decision.kind === 'suspend';
  return (
    <Dialog title={`${TITLES[decision.kind]}: ${decision.label}`} onClose={onClose}>
      <form onSubmit={submit}>
        <p class="muted">{EFFECTS[decision.kind]}</p>
        <Field
          id="decision-reason"
          label="Reason"
          rows={3}
          required
          maxLength={1000}
          value={reason}
          onValue={setReason}
          hint="Kept in the audit log; shown to the creator for a skill or an account."
        />
        {action.error && <ErrorBox error={action.error} title="Could not do it" />}
        <div class="row dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="submit"
            class={`button ${destructive ? 'button-danger' : 'button-primary'}`}
            disabled={action.busy || reason.trim() === ''}
          >
            {action.busy ? 'Working…' : TITLES[decision.kind]}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

const ACTION_LABELS: Record<AuditEntry['action'], string> = {
  'skill.hide': 'hid the skill',
  'skill.restore': 'listed the skill again',
  'creator.suspend': 'suspended the creator',
  'creator.restore': 'lifted the suspension',
  'report.dismiss': 'dismissed the report',
};

function QueueCard({ item, closed, decide }: { item: QueueItem; closed: boolean; decide: (d: Decision) => void }) {
  const { report, skill, creator, actions } = item;
  const reportId = closed ? undefined : report.id;
  return (
    <li class="queue-item">
      <div class="queue-head">
        <strong>{skill ? skill.name : `Creator ${shortAddress(creator.address)}`}</strong>
        <span class="badge">{report.category}</span>
        {skill?.hidden && <span class="badge badge-warn">hidden</span>}
        {creator.suspended && <span class="badge badge-warn">creator suspended</span>}
        {closed && <span class="badge">{report.status}</span>}
      </div>
      <blockquote class="queue-text">{report.text}</blockquote>
      <p class="muted small">
        Reported {dateTime(report.createdAt)} by <span class="mono">{shortAddress(report.reporterAddress)}</span>
      </p>
      <dl class="details queue-facts">
        {skill && (
          <>
            <dt>Listing</dt>
            <dd>
              <a href={`/skill/${encodeURIComponent(skill.slug)}`}>{skill.slug}</a>
              {!skill.isActive && <span class="badge">paused</span>}
              <div class="mono break small">{skill.endpoint}</div>
            </dd>
            <dt>Health</dt>
            <dd>
              {skill.status}
              {skill.lastUpAt && <span class="muted small"> (last up {dateTime(skill.lastUpAt)})</span>}
            </dd>
            <dt>Buyers</dt>
            <dd>
              {count(skill.buyerCount)} <span class="muted small">({count(skill.paidCallCount)} paid calls)</span>
            </dd>
          </>
        )}
        <dt>Creator</dt>
        <dd>
          <a class="mono break" href={`/creator/${creator.address}`}>
            {creator.address}
          </a>
          {creator.suspended && <div class="small">Suspended: {creator.suspended.reason}</div>}
        </dd>
        {skill?.hidden && (
          <>
            <dt>Hidden</dt>
            <dd>{skill.hidden.reason}</dd>
          </>
        )}
      </dl>
      {actions.length > 0 && (
        <details>
          <summary>Earlier actions ({actions.length})</summary>
          <ul class="small">
            {actions.map((a) => (
              <li key={a.seq}>
                {dateTime(a.createdAt)}: <span class="mono">{shortAddress(a.operatorAddress)}</span> {ACTION_LABELS[a.action]} — {a.reason}
              </li>
            ))}
          </ul>
        </details>
      )}
      <div class="row">
        {skill &&
          (skill.hidden ? (
            <button
              type="button"
              class="button button-small"
              onClick={() => decide({ kind: 'restore-skill', slug: skill.slug, label: skill.name, reportId })}
            >
              List again
            </button>
          ) : (
            <button
              type="button"
              class="button button-small button-danger"
              onClick={() => decide({ kind: 'hide', slug: skill.slug, label: skill.name, reportId })}
            >
              Hide skill
            </button>
          ))}
        {creator.suspended ? (
          <button
            type="button"
            class="button button-small"
            onClick={() => decide({ kind: 'restore-creator', address: creator.address, label: shortAddress(creator.address), reportId })}
          >
            Lift suspension
          </button>
        ) : (
          <button
            type="button"
            class="button button-small button-danger"
            onClick={() => decide({ kind: 'suspend', address: creator.address, label: shortAddress(creator.address), reportId })}
          >
            Suspend creator
          </button>
        )}
        {!closed && (
          <button
            type="button"
            class="button button-small"
            onClick={() => decide({ kind: 'dismiss', reportId: report.id, label: skill?.name ?? shortAddress(creator.address) })}
          >
            Dismiss
          </button>
        )}
      </div>
    </li>
  );
}

/** Reports per page of the queue. */
const QUEUE_PAGE = 20;

function Queue({ decide, version }: { decide: (d: Decision) => void; version: number }) {
  const [status, setStatus] = useState<'open' | 'closed'>('open');
  const [first, retry] = useResource(
    async (signal) => {
      const { items, nextCursor } = await registry.reportQueue({ status, limit: QUEUE_PAGE }, signal);
      return { items, next: nextCursor ?? null };
    },
    [status, version],
  );
  // Pages loaded after the first, dropped whenever the first loads again.
  const [more, setMore] = useState<{ items: QueueItem[]; next: string | null; of: typeof first } | undefined>();
  const load = useAction();
  const extra = more?.of === first ? more : undefined;
  const next = extra ? extra.next : first.state === 'ready' ? first.data.next : null;
  const loadMore = async () => {
    if (!next) return;
    const page = await load.run(() => registry.reportQueue({ status, limit: QUEUE_PAGE, cursor: next }));
    if (page) setMore({ items: [...(extra?.items ?? []), ...page.items], next: page.nextCursor ?? null, of: first });
  };
  const items = first.state === 'ready' ? [...first.data.items, ...(extra?.items ?? [])] : [];
  return (
    <section aria-labelledby="queue-title">
      <div class="row">
        <h2 id="queue-title" class="no-top">
          Reports
        </h2>
        {/* biome-ignore lint/a11y/useSemanticElements: toggle buttons styled as one segmented control */}
        <div class="segmented" role="group" aria-label="Which reports">
          {(['open', 'closed'] as const).map((s) => (
            <button key={s} type="button" class="button button-small" aria-pressed={status === s} onClick={() => setStatus(s)}>
              {s === 'open' ? 'Open' : 'Closed'}
            </button>
          ))}
        </div>
      </div>
      {first.state === 'loading' ? (
        <Skeleton lines={4} label="Loading the reports" />
      ) : first.state === 'error' ? (
        <ErrorBox error={first.error} title="Could not load the reports" retry={retry} />
      ) : items.length === 0 ? (
        <Empty title={status === 'open' ? 'No open reports' : 'No closed reports yet'}>
          {status === 'open' ? 'Reports from signed-in users arrive here, oldest first.' : 'Reports you act on or dismiss move here.'}
        </Empty>
      ) : (
        <>
          <ul class="queue">
            {items.map((item) => (
              <QueueCard key={item.report.id} item={item} closed={status === 'closed'} decide={decide} />
            ))}
          </ul>
          {load.error && <ErrorBox error={load.error} title="Could not load more reports" retry={loadMore} />}
          {next && (
            <p class="center">
              <button type="button" class="button" onClick={loadMore} disabled={load.busy}>
                {load.busy ? 'Loading…' : 'Load more reports'}
              </button>
            </p>
          )}
        </>
      )}
    </section>
  );
}

/** Act without a report: a skill by its slug, a creator by their address. */
function DirectAction({ decide }: { decide: (d: Decision) => void }) {
  const [target, setTarget] = useState('');
  const value = target.trim();
  const isAddress = /^0x[0-9a-fA-F]{40}$/.test(value);
  return (
    <details class="direct-action">
      <summary>Act on a skill or creator without a report</summary>
      <Field
        id="direct-target"
        label="Skill slug or creator address"
        value={target}
        onValue={setTarget}
        hint="A skill’s slug (from its page’s address) or a creator’s 0x address."
      />
      <div class="row">
        {isAddress ? (
          <>
            <button
              type="button"
              class="button button-small button-danger"
              onClick={() => decide({ kind: 'suspend', address: value, label: shortAddress(value) })}
            >
              Suspend creator
            </button>
            <button
              type="button"
              class="button button-small"
              onClick={() => decide({ kind: 'restore-creator', address: value, label: shortAddress(value) })}
            >
              Lift suspension
            </button>
          </>
        ) : (
          <>
            <button
              type="button"
              class="button button-small button-danger"
              disabled={value === ''}
              onClick={() => decide({ kind: 'hide', slug: value, label: value })}
            >
              Hide skill
            </button>
            <button
              type="button"
              class="button button-small"
              disabled={value === ''}
              onClick={() => decide({ kind: 'restore-skill', slug: value, label: value })}
            >
              List again
            </button>
          </>
        )}
      </div>
    </details>
  );
}

function AuditLog({ version }: { version: number }) {
  const [log, retry] = useResource((signal) => registry.call(r.auditLog, { query: { limit: 100 } }, { signal }), [version]);
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <p class="muted small">
        Every operator action, newest first (the latest 100 here). Download all:{' '}
        <a href="/operator/audit/export?format=csv" download="moderation-audit.csv">
          CSV
        </a>{' '}
        ·{' '}
        <a href="/operator/audit/export?format=jsonl" download="moderation-audit.jsonl">
          JSON lines
        </a>
      </p>
      {log.state === 'loading' ? (
        <Skeleton lines={3} label="Loading the audit log" />
      ) : log.state === 'error' ? (
        <ErrorBox error={log.error} title="Could not load the audit log" retry={retry} />
      ) : log.data.length === 0 ? (
        <Empty title="No actions yet">Each hide, suspension, undo and dismissal is recorded here with its reason.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="data-table cards">
            <caption class="visually-hidden">Audit log</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Operator</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {log.data.map((e) => (
                <tr key={e.seq}>
                  <td data-label="When">{dateTime(e.createdAt)}</td>
                  <td data-label="Operator" class="mono">
                    {shortAddress(e.operatorAddress)}
                  </td>
                  <td data-label="Action">{e.action}</td>
                  <td data-label="Target" class="mono break">
                    {e.targetType === 'creator' ? shortAddress(e.targetLabel) : e.targetLabel}
                  </td>
                  <td data-label="Reason">{e.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function OperatorView() {
  const [decision, setDecision] = useState<Decision | undefined>();
  // Bumped after each decision: the queue and the log load again.
  const [version, setVersion] = useState(0);
  return (
    <>
      <Queue decide={setDecision} version={version} />
      <DirectAction decide={setDecision} />
      <AuditLog version={version} />
      {decision && (
        <DecisionDialog
          decision={decision}
          onClose={() => setDecision(undefined)}
          onDone={() => {
            setDecision(undefined);
            setVersion((v) => v + 1);
          }}
        />
      )}
    </>
  );
}
