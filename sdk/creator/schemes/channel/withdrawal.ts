/**
 * A payer's timed withdrawal as the skill server meets it. Once the withdrawal's delay has passed
 * (`withdrawRequestedAt + withdrawDelay`, chain time), the payer may finalize it at any moment and
 * take back what the server has not claimed: so the server takes a voucher on such a channel only
 * while its claim of it still lands before then (`claimWithinMs`, a claim round and a minute for the
 * claim to be mined), and a claim refused meanwhile is tried again soon enough for a few more tries.
 */
import type { ChannelSettings } from './settings';
import type { ChannelState } from './store';

/** Time left for a claim transaction to be sent, mined and reported, on top of `claimWithinMs` and a claim round. */
export const CLAIM_LANDING_MS = 60_000;

/** The 402 reason of a voucher refused because the channel's withdrawal ends before its claim would land. */
export const WITHDRAWAL_PENDING = 'invalid_batch_settlement_evm_withdrawal_pending';

/** When the channel's pending withdrawal can be finalized, ms; undefined when none is pending. */
function withdrawalEndsAt(state: ChannelState): number | undefined {
  if (state.withdrawRequestedAt === 0) return undefined;
  return (state.withdrawRequestedAt + state.config.withdrawDelay) * 1000;
}

/** How long before a withdrawal's end a charge must be made for its claim to land in time, ms. */
const claimLeadMs = (settings: Pick<ChannelSettings, 'claimWithinMs' | 'claimIntervalMs'>) =>
  settings.claimWithinMs + settings.claimIntervalMs + CLAIM_LANDING_MS;

/** Whether the channel takes another voucher at `now`: no withdrawal pending, or one whose end leaves time for the claim. */
export function takesVouchers(settings: ChannelSettings, state: ChannelState, now: number): boolean {
  const end = withdrawalEndsAt(state);
  return end === undefined || end - now >= claimLeadMs(settings);
}

/**
 * How long a channel whose claim was refused waits before the next try: `pauseMs`, or on a channel
 * with a withdrawal pending a quarter of the time left before its end when that is shorter (at
 * least a claim round): a few more tries still land before the payer can finalize.
 */
export function claimRetryMs(settings: ChannelSettings, state: ChannelState, now: number, pauseMs: number): number {
  const end = withdrawalEndsAt(state);
  if (end === undefined) return pauseMs;
  return Math.max(settings.claimIntervalMs, Math.min(pauseMs, Math.floor((end - now) / 4)));
}
