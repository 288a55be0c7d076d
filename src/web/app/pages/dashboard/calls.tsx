/**
 * My paid calls: newest first, paged by the registry's cursor, each with its receipt: a transfer
 * with its check on chain (and the skill server's signed receipt against it: a mismatch marked), a
 * call paid over a payment channel with its state (and the channel's deposit, escrow not payment,
 * when the call made one).
 */
import { useState } from 'preact/hooks';
import { Empty, ErrorBox, Skeleton } from '../../components/states';
import { PAYMENT_REVERTED_REASON, type UsageChannelView, type UsageRecordView as UsageRecord } from 'skill-market/registry';
import { TxLink } from '../../components/tx-link';
import { registry } from '../../lib/api';
import { shortAddress, usdc } from '../../lib/format';
import { useAction } from '../../lib/use-action';
import { useResource } from '../../lib/use-resource';

const CHECK_TEXT: Record<UsageRecord['verification'], string> = {
  none: 'no payment reference',
  pending: 'being checked on chain',
  verified: 'verified on chain',
  rejected: 'rejected on chain: not counted',
};

const CHANNEL_TEXT: Record<UsageChannelView['state'], string> = {
  charged: 'charged to your channel',
  earned: 'earned by the skill, not yet claimed',
  claimed: 'claimed on chain',
  settled: 'claimed and paid out on chain',
  refused: 'not counted',
};

const PAGE = 20;

/** The receipt of a call paid over a payment channel: which channel, its state, and the deposit it made. */
function ChannelReceipt({ channel, network }: { channel: UsageChannelView; network: string }) {
  const state = channel.state === 'refused' && channel.reason ? `not counted: ${channel.reason}` : CHANNEL_TEXT[channel.state];
  // One block, so a phone's card keeps it together beside its label.
  return (
    <span class="channel-receipt">
      Paid from channel <code title={channel.channelId}>{shortAddress(channel.channelId)}</code>
      <span class={`muted channel-state-${channel.state}`}> · {state}</span>
      {channel.depositTransaction && (
        <span class="deposit-line small">
          Deposit{channel.depositAmountAtomic ? ` of ${usdc(BigInt(channel.depositAmountAtomic))}` : ''} (yours until charged):{' '}
          <TxLink reference={channel.depositTransaction} network={network} />
        </span>
      )}
    </span>
  );
}

/** What a record's check says; a reverted transfer says so plainly: the call was answered but nothing was charged. */
function checkText(record: UsageRecord): string {
  if (record.verification === 'rejected' && record.verificationReason === PAYMENT_REVERTED_REASON) return 'payment reverted: not charged';
  if (record.verification === 'rejected' && record.verificationReason) return `payment rejected: ${record.verificationReason}`;
  return CHECK_TEXT[record.verification] ?? record.verification;
}

/**
 * How the skill server's signed receipt of a call stands against the chain: a mismatch plainly
 * (the receipt names another amount than the payment moved), a match or a pending check quietly.
 */
function ReceiptMark({ record }: { record: UsageRecord }) {
  const signed = record.receipt?.payload.amount;
  if (!signed || !record.receiptCheck) return null;
  if (record.receiptCheck === 'mismatch')
    return (
      <span class="receipt-mark">
        <span class="badge badge-warn">receipt disagrees with the chain</span>{' '}
        <span class="small">it says {usdc(BigInt(signed))}; the payment moved another amount</span>
      </span>
    );
  return (
    <span class={`muted small receipt-${record.receiptCheck}`}>
      {' '}
      · {record.receiptCheck === 'matches' ? 'receipt matches' : 'receipt not checked yet'}
    </span>
  );
}

export function CallsView() {
  const [first, retry] = useResource(async (signal) => {
    const { items, nextCursor } = await registry.usage({ limit: PAGE }, signal);
    return { records: items, next: nextCursor ?? null };
  }, []);
  const [more, setMore] = useState<{ records: UsageRecord[]; next: string | null } | undefined>();
  const load = useAction();
  if (first.state === 'loading') return <Skeleton lines={5} label="Loading your paid calls" />;
  if (first.state === 'error') return <ErrorBox error={first.error} title="Could not load your paid calls" retry={retry} />;
  const records = [...first.data.records, ...(more?.records ?? [])];
  const next = more ? more.next : first.data.next;
  if (records.length === 0) {
    return (
      <Empty title="No paid calls yet">
        Calls you pay for while signed in (<strong>Try it</strong> on a skill page, or the SDK with your consumer key) show here with their
        receipts. <a href="/">Browse the marketplace</a>
      </Empty>
    );
  }
  const loadMore = async () => {
    if (!next) return;
    const page = await load.run(() => registry.usage({ limit: PAGE, cursor: next }));
    if (page) setMore({ records: [...(more?.records ?? []), ...page.items], next: page.nextCursor ?? null });
  };
  return (
    <>
      <div class="table-wrap">
        <table class="data-table cards">
          <caption class="visually-hidden">Your paid calls, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Skill</th>
              <th scope="col" class="num">
                Paid
              </th>
              <th scope="col">Receipt</th>
            </tr>
          </thead>
          <tbody>
            {records.map((r) => (
              <tr key={r.id}>
                <td class="nowrap" data-label="When">
                  {new Date(r.createdAt).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short' })}
                </td>
                <th scope="row">
                  <a href={`/skill/${encodeURIComponent(r.skillSlug)}`}>{r.skillName}</a>
                </th>
                <td class="num" data-label="Paid">
                  {usdc(BigInt(r.amountAtomic))}
                </td>
                <td class="receipt-cell" data-label="Receipt">
                  {r.channel ? (
                    <ChannelReceipt channel={r.channel} network={r.network} />
                  ) : (
                    // One block, so a phone's card keeps it together beside its label.
                    <span class="transfer-receipt">
                      <TxLink reference={r.paymentRef} network={r.network} />
                      <span class={`muted check-${r.verification}`} title={r.verificationReason ?? undefined}>
                        {' '}
                        · {checkText(r)}
                      </span>
                      <ReceiptMark record={r} />
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {load.error && <ErrorBox error={load.error} title="Could not load more calls" retry={loadMore} />}
      {next && (
        <p class="center">
          <button type="button" class="button" onClick={loadMore} disabled={load.busy}>
            {load.busy ? 'Loading…' : 'Show older calls'}
          </button>
        </p>
      )}
    </>
  );
}
