/**
 * Try it's payment channel pieces: the opt-in shown when a skill offers a channel beside one
 * payment per call, the "Channels" line with the open channel's balance, and the receipt of a call
 * paid from the channel (its deposit transaction the first time, no transaction for a voucher).
 */
import { channelChoice, channelLeft, channelRecords, openChannel } from '../lib/channels';
import { pageConfig } from '../lib/config';
import { shortAddress, usdc } from '../lib/format';
import type { ChannelPaid } from '../lib/pay';

/**
 * The opt-in: off by default, remembered by this browser; `onChange` asks for the terms again.
 * `deposit` is what opting in deposits now (the SDK's deposit policy): 0n when this browser's
 * channel holds enough, undefined while it is worked out.
 */
export function ChannelOptIn({
  deposit,
  payTo,
  onChange,
}: {
  deposit: bigint | undefined;
  payTo: string;
  onChange: (on: boolean) => void;
}) {
  return (
    <div class="channel-opt-in">
      <div class="field field-check">
        <input
          id="channel-opt-in"
          type="checkbox"
          checked={channelChoice.value}
          onChange={(e) => onChange(e.currentTarget.checked)}
          aria-describedby="channel-opt-in-hint"
        />
        <label for="channel-opt-in">
          {deposit ? (
            <>
              Pay through a payment channel: one deposit of <strong class="channel-deposit">{usdc(deposit)} USDC</strong> now, then calls
              without a wallet prompt
            </>
          ) : (
            <>Pay through a payment channel: calls without a wallet prompt</>
          )}
        </label>
      </div>
      <p id="channel-opt-in-hint" class="muted small">
        The deposit is escrow in the x402 batch-settlement contract, not a payment: each call charges only its price, and what is not
        charged is refundable (you can withdraw it). A session key kept in this browser signs each call; it can spend only what this channel
        holds, and only to <code title={payTo}>{shortAddress(payTo)}</code>.
      </p>
    </div>
  );
}

/** "Channels": the open channel with `payTo` from `payer` and what is left in it, when there is one. */
export function ChannelsLine({ payTo, payer }: { payTo: string; payer: string | undefined }) {
  const record = openChannel(channelRecords.value, payTo, payer);
  if (!record) return null;
  return (
    <p class="channels small">
      Channels: <strong class="channel-balance">{usdc(channelLeft(record))} USDC</strong> left of {usdc(BigInt(record.balance))} deposited
      in your channel to <code title={payTo}>{shortAddress(payTo)}</code>
      {channelChoice.value ? '' : ' (not used while paying through a channel is off)'}.
    </p>
  );
}

/** The receipt of a call paid from the channel. */
export function ChannelReceipt({ paid }: { paid: ChannelPaid }) {
  const explorer = pageConfig.value?.explorer;
  return (
    <section class="receipt" aria-label="Payment receipt">
      <h4>Receipt</h4>
      <p>
        Paid from your channel: charged <strong>{usdc(paid.charged)}</strong>, channel balance left{' '}
        <strong class="channel-left">{usdc(paid.left)}</strong>.
      </p>
      {(paid.deposited !== undefined || paid.deposit) && (
        <p class="small">
          {paid.deposited !== undefined ? (
            <>
              This call first deposited <strong class="channel-deposited">{usdc(paid.deposited)}</strong> into the channel (refundable; each
              call is charged from it)
            </>
          ) : (
            <>The channel's deposit was made</>
          )}
          {paid.deposit && (
            <>
              {' '}
              in transaction{' '}
              {explorer ? (
                <a class="mono tx-hash" href={`${explorer.url}/tx/${paid.deposit}`} target="_blank" rel="noopener noreferrer">
                  {paid.deposit}
                </a>
              ) : (
                <code class="tx-hash break">{paid.deposit}</code>
              )}
            </>
          )}
          .
        </p>
      )}
    </section>
  );
}
