/**
 * The skill analytics page's splits of its paid calls and revenue: by how they were paid (and the
 * free trial calls beside them), by volume price tier (a skill with volume prices only), and the
 * calls whose signed receipt disagrees with what the chain shows paid.
 */
import type { Analytics, SkillView } from 'skill-market/registry';
import { Empty, ErrorBox, Skeleton } from '../../components/states';
import { TxLink } from '../../components/tx-link';
import { registry } from '../../lib/api';
import { count, usdc } from '../../lib/format';
import { useResource } from '../../lib/use-resource';

const SCHEMES = [
  ['exact', 'Single payments (exact)'],
  ['upto', 'Charged by use (upto)'],
  ['batchSettlement', 'Payment channels, claimed'],
] as const;

/** Paid calls and revenue by how they were paid, and the free trial calls (no revenue). */
export function PaidBy({ analytics }: { analytics: Analytics }) {
  const schemes = analytics.schemes;
  const trials = analytics.trialCallCount ?? 0;
  if (!schemes && trials === 0) return null;
  const rows = schemes ? SCHEMES.filter(([key]) => schemes[key].calls > 0) : [];
  if (rows.length === 0 && trials === 0) return null;
  return (
    <section class="analytics-split" aria-labelledby="paid-by-title">
      <h3 id="paid-by-title">How calls were paid</h3>
      <div class="table-wrap">
        <table class="data-table" data-testid="paid-by">
          <caption class="visually-hidden">Paid calls and revenue by how they were paid</caption>
          <thead>
            <tr>
              <th scope="col">Paid by</th>
              <th scope="col" class="num">
                Calls
              </th>
              <th scope="col" class="num">
                Revenue
              </th>
            </tr>
          </thead>
          <tbody>
            {schemes &&
              rows.map(([key, label]) => (
                <tr key={key}>
                  <th scope="row">{label}</th>
                  <td class="num">{count(schemes[key].calls)}</td>
                  <td class="num">{usdc(BigInt(schemes[key].revenueAtomic))}</td>
                </tr>
              ))}
            {trials > 0 && (
              <tr>
                <th scope="row">Free trial</th>
                <td class="num">{count(trials)}</td>
                <td class="num muted">none</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}

const PERIOD: Record<string, string> = { day: 'each day', week: 'each week', month: 'each month' };

/** What one tier row is called: the base price, a step by its threshold, or calls whose tier is not known. */
function tierLabel(after: number | null): string {
  if (after === null) return 'Tier not known';
  if (after === 0) return 'Base price';
  return `After ${count(after)} ${after === 1 ? 'call' : 'calls'}`;
}

/** Paid calls and revenue per volume price tier; nothing for a skill without volume prices. */
export function ByPrice({ analytics, skill }: { analytics: Analytics; skill: { tiers?: SkillView['tiers'] | undefined } }) {
  const tiers = analytics.tiers;
  if (!tiers || tiers.length === 0) return null;
  return (
    <section class="analytics-split" aria-labelledby="by-price-title">
      <h3 id="by-price-title">By price</h3>
      <p class="muted small">
        The price each call was charged, as its skill server reported it: a payer’s calls count towards a lower price
        {skill.tiers ? ` ${PERIOD[skill.tiers.period] ?? skill.tiers.period}` : ''}.
      </p>
      <div class="table-wrap">
        <table class="data-table" data-testid="by-price">
          <caption class="visually-hidden">Paid calls and revenue by volume price</caption>
          <thead>
            <tr>
              <th scope="col">Tier</th>
              <th scope="col" class="num">
                Price
              </th>
              <th scope="col" class="num">
                Calls
              </th>
              <th scope="col" class="num">
                Revenue
              </th>
            </tr>
          </thead>
          <tbody>
            {tiers.map((t) => (
              <tr key={t.after ?? 'unknown'}>
                <th scope="row">{tierLabel(t.after)}</th>
                <td class="num">{t.priceAtomic === null ? '—' : usdc(BigInt(t.priceAtomic))}</td>
                <td class="num">{count(t.calls)}</td>
                <td class="num">{usdc(BigInt(t.revenueAtomic))}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** How many receipt mismatches the page lists (the newest). */
const MISMATCHES_SHOWN = 10;

/**
 * The calls whose signed receipt names another amount than the chain shows paid, newest first:
 * revenue is what the chain shows either way, but a receipt the payer holds says otherwise.
 */
export function ReceiptMismatches({ skillId, total }: { skillId: string; total: number }) {
  const [list, retry] = useResource(
    (signal) => registry.skillPayments(skillId, { receipt: 'mismatch', limit: MISMATCHES_SHOWN }, signal),
    [skillId],
  );
  return (
    <section class="receipt-mismatches" aria-labelledby="receipt-mismatches-title">
      <h3 id="receipt-mismatches-title">
        Receipts that disagree with the chain <span class="badge badge-warn">{count(total)}</span>
      </h3>
      <p class="muted small">
        Calls whose signed receipt names another amount than the payment moved on chain. Revenue counts what the chain shows; the payer
        holds a receipt that says otherwise, so look at the skill server that signed it.
      </p>
      {list.state === 'loading' && <Skeleton lines={2} label="Loading the receipt mismatches" />}
      {list.state === 'error' && <ErrorBox error={list.error} title="Could not load the receipt mismatches" retry={retry} />}
      {list.state === 'ready' && list.data.items.length === 0 && (
        <Empty title="No receipt mismatches">Every receipt checked so far matches.</Empty>
      )}
      {list.state === 'ready' && list.data.items.length > 0 && (
        <div class="table-wrap">
          <table class="data-table cards">
            <caption class="visually-hidden">Calls whose receipt disagrees with the chain, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Reported</th>
                <th scope="col" class="num">
                  Receipt says
                </th>
                <th scope="col">Transaction</th>
                <th scope="col" class="num">
                  Chain shows
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((p) => (
                <tr key={p.id} data-testid="receipt-mismatch">
                  <td class="nowrap" data-label="Reported">
                    {new Date(p.reportedAt).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short' })}
                  </td>
                  <td class="num" data-label="Receipt says">
                    <span class="badge badge-warn">{p.receiptAmountAtomic ? usdc(BigInt(p.receiptAmountAtomic)) : '—'}</span>
                  </td>
                  <td class="receipt-cell" data-label="Transaction">
                    <TxLink reference={p.txHash} network={p.network} />
                  </td>
                  <td class="num" data-label="Chain shows">
                    {p.paidAtomic ? usdc(BigInt(p.paidAtomic)) : '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
