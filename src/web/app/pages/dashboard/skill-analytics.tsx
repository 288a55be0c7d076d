/**
 * One skill's analytics: counters and daily views, calls and revenue over 7 or 30 days (uPlot),
 * the paid calls split by how they were paid and by volume price, and the calls whose receipt
 * disagrees with the chain.
 */
import { useState } from 'preact/hooks';
import { PAYMENT_REVERTED_REASON } from 'skill-market/registry';
import { SeriesChart } from '../../components/series-chart';
import { Empty, ErrorBox, Skeleton } from '../../components/states';
import { TxLink } from '../../components/tx-link';
import { registry } from '../../lib/api';
import { count, usdc } from '../../lib/format';
import { useResource } from '../../lib/use-resource';
import { ByPrice, PaidBy, ReceiptMismatches } from './skill-analytics-splits';

/** How many rejected payments the analytics page lists (the newest). */
const REJECTED_SHOWN = 10;

/**
 * The skill's payments the chain check rejected, newest first: a reverted transfer (a `broadcast`
 * call answered before its block, the payer's balance gone by then) says so; others show the
 * registry's reason. None of them counts as a paid call or revenue.
 */
function RejectedPayments({ skillId, total }: { skillId: string; total: number }) {
  const [list, retry] = useResource(
    (signal) => registry.skillPayments(skillId, { state: 'rejected', limit: REJECTED_SHOWN }, signal),
    [skillId],
  );
  return (
    <section class="rejected-payments" aria-labelledby="rejected-payments-title">
      <h3 id="rejected-payments-title">Rejected payments</h3>
      <p class="muted small">
        Calls answered whose payment the chain check refused, such as a transfer that reverted after a fast (broadcast) answer. They count
        in no revenue or paid-call figure.
      </p>
      {list.state === 'loading' && <Skeleton lines={3} label="Loading the rejected payments" />}
      {list.state === 'error' && <ErrorBox error={list.error} title="Could not load the rejected payments" retry={retry} />}
      {list.state === 'ready' && list.data.items.length === 0 && (
        <Empty title="No rejected payments">Every payment reported for this skill was verified on chain or is still being checked.</Empty>
      )}
      {list.state === 'ready' && list.data.items.length > 0 && (
        <>
          <div class="table-wrap">
            <table class="data-table">
              <caption class="visually-hidden">Rejected payments, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Reported</th>
                  <th scope="col" class="num">
                    Amount
                  </th>
                  <th scope="col">Transaction</th>
                  <th scope="col">Why</th>
                </tr>
              </thead>
              <tbody>
                {list.data.items.map((p) => (
                  <tr key={p.id}>
                    <td class="nowrap">{new Date(p.reportedAt).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short' })}</td>
                    <td class="num">{usdc(BigInt(p.amountAtomic))}</td>
                    <td class="receipt-cell">
                      <TxLink reference={p.txHash} network={p.network} />
                    </td>
                    <td class="rejected-reason">
                      {p.reason === PAYMENT_REVERTED_REASON ? (
                        <span class="badge badge-warn">payment reverted: not charged</span>
                      ) : (
                        (p.reason ?? 'rejected')
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {total > list.data.items.length && (
            <p class="muted small">
              The newest {list.data.items.length} of {count(total)}.
            </p>
          )}
        </>
      )}
    </section>
  );
}

const calls = (n: number) => `${count(n)} ${n === 1 ? 'call' : 'calls'}`;
const receipts = (n: number) => `${count(n)} ${n === 1 ? 'receipt' : 'receipts'}`;
const money = (n: number) => `$${Number(n.toFixed(6))}`;

export function SkillAnalytics({ slug }: { slug: string }) {
  const [days, setDays] = useState<7 | 30>(30);
  const [data, retry] = useResource(
    async (signal) => {
      const skill = await registry.skill(slug, signal);
      const analytics = await registry.analytics(skill.id, days, signal);
      return { skill, analytics };
    },
    [slug, days],
  );
  return (
    <div>
      <p>
        <a href="/dashboard/skills">← All my skills</a>
      </p>
      <div class="analytics-head">
        <h2 class="no-top">{data.state === 'ready' ? data.data.skill.name : slug}</h2>
        {/* biome-ignore lint/a11y/useSemanticElements: toggle buttons styled as one segmented control */}
        <div class="segmented" role="group" aria-label="Period">
          {([7, 30] as const).map((d) => (
            <button key={d} type="button" class="button button-small" aria-pressed={days === d} onClick={() => setDays(d)}>
              {d} days
            </button>
          ))}
        </div>
      </div>
      {data.state === 'loading' && <Skeleton lines={6} label="Loading the analytics" />}
      {data.state === 'error' && <ErrorBox error={data.error} title="Could not load the analytics" retry={retry} />}
      {data.state === 'ready' && (
        <>
          <dl class="stats stats-five">
            <div>
              <dt>Calls</dt>
              <dd data-testid="stat-calls">{count(data.data.analytics.callCount)}</dd>
            </div>
            <div>
              <dt>Views</dt>
              <dd>{count(data.data.analytics.viewCount)}</dd>
            </div>
            <div>
              <dt>Favourites</dt>
              <dd>{count(data.data.analytics.favoriteCount)}</dd>
            </div>
            <div>
              <dt>Revenue</dt>
              <dd data-testid="stat-revenue">{usdc(data.data.analytics.totalRevenue)}</dd>
              {BigInt(data.data.analytics.channels.earnedAtomic) > 0n && (
                <dd class="muted stat-note" data-testid="stat-earned">
                  + {usdc(BigInt(data.data.analytics.channels.earnedAtomic))} earned, not yet claimed
                </dd>
              )}
            </div>
            <div>
              <dt>Rejected payments</dt>
              <dd data-testid="stat-rejected">{count(data.data.analytics.rejectedPaymentCount)}</dd>
              {(data.data.analytics.receiptMismatchCount ?? 0) > 0 && (
                <dd class="stat-note stat-warn" data-testid="stat-receipt-mismatch">
                  {receipts(data.data.analytics.receiptMismatchCount!)}{' '}
                  {data.data.analytics.receiptMismatchCount! === 1 ? 'disagrees' : 'disagree'} with the chain
                </dd>
              )}
            </div>
          </dl>
          <div class="chart-grid">
            <SeriesChart
              title="Calls"
              dates={data.data.analytics.daily.map((d) => d.date)}
              values={data.data.analytics.daily.map((d) => d.calls)}
            />
            <SeriesChart
              title="Views"
              dates={data.data.analytics.daily.map((d) => d.date)}
              values={data.data.analytics.daily.map((d) => d.views)}
            />
            <SeriesChart
              title="Revenue (USDC)"
              dates={data.data.analytics.daily.map((d) => d.date)}
              values={data.data.analytics.daily.map((d) => Number(d.revenue))}
              format={money}
            />
          </div>
          {(data.data.analytics.channels.earnedCalls > 0 || data.data.analytics.channels.claimedCalls > 0) && (
            <p data-testid="channel-revenue">
              Over payment channels: <strong>{usdc(BigInt(data.data.analytics.channels.claimedAtomic))}</strong> claimed on chain (
              {calls(data.data.analytics.channels.claimedCalls)}, in the revenue above;{' '}
              {usdc(BigInt(data.data.analytics.channels.settledAtomic))} settled), and{' '}
              <strong>{usdc(BigInt(data.data.analytics.channels.earnedAtomic))}</strong> earned but not yet claimed (
              {calls(data.data.analytics.channels.earnedCalls)}). <a href="/dashboard/channels">See the channels</a>
            </p>
          )}
          <div class="split-grid">
            <PaidBy analytics={data.data.analytics} />
            <ByPrice analytics={data.data.analytics} skill={data.data.skill} />
          </div>
          {(data.data.analytics.receiptMismatchCount ?? 0) > 0 && (
            <ReceiptMismatches skillId={data.data.skill.id} total={data.data.analytics.receiptMismatchCount!} />
          )}
          <RejectedPayments skillId={data.data.skill.id} total={data.data.analytics.rejectedPaymentCount} />
          <p class="small">
            <a href={`/skill/${encodeURIComponent(slug)}`}>Open the public page</a>
          </p>
        </>
      )}
    </div>
  );
}
