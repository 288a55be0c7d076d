/**
 * My reports (every signed-in account): the reports the account filed, newest first, each with its
 * status and what the operators did (the skill hidden, the creator suspended, or dismissed); the
 * operators' reasons stay theirs. Older reports a page at a time.
 */
import { useState } from 'preact/hooks';
import type { OwnReport } from 'skill-market/registry';
import { Empty, ErrorBox, Skeleton } from '../../components/states';
import { registry } from '../../lib/api';
import { dateTime, shortAddress } from '../../lib/format';
import { useAction } from '../../lib/use-action';
import { useResource } from '../../lib/use-resource';

const PAGE = 20;

const OUTCOMES: Record<NonNullable<OwnReport['outcome']>, string> = {
  'skill.hide': 'The operators hid the skill',
  'skill.restore': 'The operators listed the skill again',
  'creator.suspend': 'The operators suspended the creator',
  'creator.restore': 'The operators lifted the creator’s suspension',
  'report.dismiss': 'Dismissed: the operators took no action',
};

function outcomeText(report: OwnReport): string {
  if (report.status === 'open') return 'Waiting for the operators';
  if (report.outcome) return OUTCOMES[report.outcome];
  return report.status === 'dismissed' ? OUTCOMES['report.dismiss'] : 'Acted on by the operators';
}

function ReportRow({ report }: { report: OwnReport }) {
  return (
    <tr>
      <td class="nowrap" data-label="Filed">
        {dateTime(report.createdAt)}
      </td>
      <th scope="row">
        {report.skillSlug ? (
          <a href={`/skill/${encodeURIComponent(report.skillSlug)}`}>{report.skillSlug}</a>
        ) : (
          <a class="mono" href={`/creator/${report.creatorAddress}`}>
            Creator {shortAddress(report.creatorAddress)}
          </a>
        )}
        <div class="report-summary muted small break">
          {report.category}: {report.text}
        </div>
      </th>
      <td data-label="Status">
        <span class={report.status === 'actioned' ? 'badge badge-ok' : 'badge'}>{report.status}</span>
      </td>
      <td data-label="Outcome">
        <span>
          {outcomeText(report)}
          {report.closedAt && <span class="muted small"> · {dateTime(report.closedAt)}</span>}
        </span>
      </td>
    </tr>
  );
}

export function ReportsView() {
  const [first, retry] = useResource(async (signal) => {
    const { items, nextCursor } = await registry.ownReports({ limit: PAGE }, signal);
    return { items, next: nextCursor ?? null };
  }, []);
  const [more, setMore] = useState<{ items: OwnReport[]; next: string | null } | undefined>();
  const load = useAction();
  if (first.state === 'loading') return <Skeleton lines={4} label="Loading your reports" />;
  if (first.state === 'error') return <ErrorBox error={first.error} title="Could not load your reports" retry={retry} />;
  const reports = [...first.data.items, ...(more?.items ?? [])];
  const next = more ? more.next : first.data.next;
  if (reports.length === 0) {
    return (
      <Empty title="No reports yet">
        Something wrong with a skill (a scam, malware, a copy)? The <strong>Report</strong> button on its page tells the marketplace’s
        operators, and what they do shows here.
      </Empty>
    );
  }
  const loadMore = async () => {
    if (!next) return;
    const page = await load.run(() => registry.ownReports({ limit: PAGE, cursor: next }));
    if (page) setMore({ items: [...(more?.items ?? []), ...page.items], next: page.nextCursor ?? null });
  };
  return (
    <>
      <p class="muted">What you reported to the marketplace’s operators and what they did, newest first. Their reasons are not shown.</p>
      <div class="table-wrap">
        <table class="data-table cards">
          <caption class="visually-hidden">Your reports, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Filed</th>
              <th scope="col">Reported</th>
              <th scope="col">Status</th>
              <th scope="col">Outcome</th>
            </tr>
          </thead>
          <tbody>
            {reports.map((r) => (
              <ReportRow key={r.id} report={r} />
            ))}
          </tbody>
        </table>
      </div>
      {load.error && <ErrorBox error={load.error} title="Could not load more reports" retry={loadMore} />}
      {next && (
        <p class="center">
          <button type="button" class="button" onClick={loadMore} disabled={load.busy}>
            {load.busy ? 'Loading…' : 'Show older reports'}
          </button>
        </p>
      )}
    </>
  );
}
