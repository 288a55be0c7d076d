/**
 * Payment channels (x402 `batch-settlement`): a creator's, with the calls each paid (earned, not
 * yet claimed on chain; claimed, counted as revenue; settled to the payment address), and a
 * payer's, with the deposit, what was charged and claimed, what is still theirs (deposit −
 * charged), a withdrawal under way, when the registry read it on chain (just before, when stale),
 * and how to get the rest back.
 */
import { useState } from 'preact/hooks';
import type { ChannelView } from 'skill-market/registry';
import { CopyButton } from '../../components/copy-button';
import { RefundChannel } from '../../components/refund-channel';
import { Empty, ErrorBox, Skeleton } from '../../components/states';
import { registry } from '../../lib/api';
import { count, dateTime, shortAddress, usdc } from '../../lib/format';
import { useResource } from '../../lib/use-resource';

const STATE_TEXT: Record<ChannelView['state'], string> = {
  unknown: 'not found on chain yet',
  open: 'open',
  unclaimed: 'unclaimed calls',
  claimed: 'claimed, not yet settled',
  settled: 'settled',
};

const calls = (n: number) => `${count(n)} ${n === 1 ? 'call' : 'calls'}`;
const atomic = (value: string | null) => (value === null ? '—' : usdc(BigInt(value)));

function ChannelCell({ channel }: { channel: ChannelView }) {
  return (
    <th scope="row" class="nowrap">
      <code title={channel.channelId}>{shortAddress(channel.channelId)}</code> <CopyButton text={channel.channelId} />
    </th>
  );
}

function useChannels(role: 'receiver' | 'payer') {
  return useResource((signal) => registry.channels(role, signal), [role]);
}

/** The channels of the creator's skills. */
export function CreatorChannelsView() {
  const [list, retry] = useChannels('receiver');
  if (list.state === 'loading') return <Skeleton lines={4} label="Loading your skills’ channels" />;
  if (list.state === 'error') return <ErrorBox error={list.error} title="Could not load your skills’ channels" retry={retry} />;
  if (list.data.length === 0) {
    return (
      <Empty title="No payment channels yet">
        When a consumer pays your skills over a payment channel, its calls show here: earned at once, counted as revenue once your server
        claims them on chain, then settled to your payment address.
      </Empty>
    );
  }
  return (
    <div class="table-wrap">
      <table class="data-table cards">
        <caption class="visually-hidden">Payment channels of your skills, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Channel</th>
            <th scope="col">Skills</th>
            <th scope="col">State</th>
            <th scope="col" class="num">
              Earned, not claimed
            </th>
            <th scope="col" class="num">
              Claimed (revenue)
            </th>
            <th scope="col" class="num">
              Settled
            </th>
          </tr>
        </thead>
        <tbody>
          {list.data.map((c) => (
            <tr key={c.channelId} data-testid="channel-row">
              <ChannelCell channel={c} />
              <td data-label="Skills">{c.skills.join(', ')}</td>
              <td data-label="State">
                <span class={c.state === 'settled' ? 'badge badge-ok' : c.state === 'unknown' ? 'badge badge-warn' : 'badge'}>
                  {STATE_TEXT[c.state]}
                </span>
                {c.refusedCalls > 0 && <span class="muted small"> · {count(c.refusedCalls)} refused</span>}
              </td>
              <td class="num" data-label="Earned, not claimed">
                <span>
                  {atomic(c.earnedAtomic)} <span class="muted small">({calls(c.earnedCalls)})</span>
                </span>
              </td>
              <td class="num" data-label="Claimed (revenue)">
                <span>
                  {atomic(c.countedAtomic)} <span class="muted small">({calls(c.countedCalls)})</span>
                </span>
              </td>
              <td class="num" data-label="Settled">
                {atomic(c.settledAtomic)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The channels the signed-in wallet (or one of its spending wallets) pays from. */
export function PayerChannelsView() {
  const [list, retry] = useChannels('payer');
  /** Channels refunded from this page: theirs is back in the wallet before the registry reads the chain again. */
  const [refunded, setRefunded] = useState<ReadonlySet<string>>(new Set());
  if (list.state === 'loading') return <Skeleton lines={4} label="Loading your channels" />;
  if (list.state === 'error') return <ErrorBox error={list.error} title="Could not load your channels" retry={retry} />;
  if (list.data.length === 0) {
    return (
      <Empty title="No payment channels yet">
        A skill that offers a payment channel lets you deposit once and pay each call without a transaction; your channels show here with
        their balance and charges.
      </Empty>
    );
  }
  return (
    <>
      <div class="table-wrap">
        <table class="data-table cards">
          <caption class="visually-hidden">Payment channels you pay from, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Channel</th>
              <th scope="col">Skills</th>
              <th scope="col" class="num">
                Deposit
              </th>
              <th scope="col" class="num">
                Charged
              </th>
              <th scope="col" class="num">
                Claimed
              </th>
              <th scope="col" class="num">
                Yours
              </th>
              <th scope="col">Withdrawal</th>
              <th scope="col">Checked</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((c) => (
              <tr key={c.channelId} data-testid="channel-row">
                <ChannelCell channel={c} />
                <td data-label="Skills">{c.skills.join(', ')}</td>
                <td class="num" data-label="Deposit">
                  {atomic(c.balanceAtomic)}
                </td>
                <td class="num" data-label="Charged">
                  {atomic(c.chargedAtomic)}
                </td>
                <td class="num" data-label="Claimed">
                  {atomic(c.claimedAtomic)}
                </td>
                <td class="num" data-label="Yours">
                  <div class="yours">
                    <span data-testid="channel-left">{refunded.has(c.channelId) ? usdc(0n) : atomic(c.payerAtomic)}</span>
                    {BigInt(c.payerAtomic ?? '0') > 0n && BigInt(c.withdrawingAtomic) === 0n && (
                      <div class="money-back">
                        <RefundChannel channel={c} onRefunded={() => setRefunded((done) => new Set(done).add(c.channelId))} />
                      </div>
                    )}
                  </div>
                </td>
                <td data-label="Withdrawal" data-testid="channel-withdrawal">
                  {BigInt(c.withdrawingAtomic) > 0n ? (
                    <span>
                      {usdc(BigInt(c.withdrawingAtomic))}{' '}
                      <span class="muted small">started {c.withdrawInitiatedAt ? dateTime(c.withdrawInitiatedAt) : ''}</span>
                    </span>
                  ) : (
                    <span class="muted">none</span>
                  )}
                </td>
                <td class="nowrap" data-label="Checked" data-testid="channel-checked">
                  {c.checkedAt ? dateTime(c.checkedAt) : '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="small">
        <strong>Yours</strong> is the deposit no call has charged. <strong>Get it back</strong> has the skill’s server refund it: your
        wallet signs once, the marketplace’s facilitator pays the gas. Without the server, the contract’s timed withdrawal returns it too:
        start it with <code>market channels --withdraw &lt;channel id&gt;</code> and finish it after the delay with{' '}
        <code>market channels --finalize &lt;channel id&gt;</code> (your wallet pays their gas).
      </p>
    </>
  );
}
