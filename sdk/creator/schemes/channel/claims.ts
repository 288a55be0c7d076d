/**
 * Turning vouchers into money: the claimer looks over the channels every `claimIntervalMs` and
 * claims, through the facilitator's `/settle` (`type: "claim"`, one transaction for every channel
 * due), what the server charged on a channel once it reaches `claimAbove`, once its oldest
 * unclaimed charge is `claimWithinMs` old, and at once on a channel whose payer started a timed
 * withdrawal (seen by the facilitator's snapshots or, with an RPC URL, read on chain): always
 * before the withdrawal's delay ends (its calls stop taking vouchers while a claim still lands in
 * time, and a refused claim on it is tried again within a quarter of the time left, withdrawal.ts).
 * A settle (`type: "settle"`) sweeps everything claimed for the receiver to it in one transfer:
 * `settleWithinMs` after the first claim it has not swept (at once when that is 0, or when a round
 * is forced), and once after a start, for claims a previous run may have left. A claim is signed by
 * the server's receiver authorizer, else by the facilitator's, which our facilitator signs only for
 * the key it binds to the payout address (`facilitatorApiKey`, sent with every request) unless it
 * is open.
 */
import type { PrivateKeyAccount } from 'viem/accounts';
import { batchSettlementDomain, claimBatchTypes, type Hex, refundTypes } from '../../../x402/index';
import type { ChannelReader } from '../../../x402/channel-reader';
import { FacilitatorUnavailableError } from '../../errors';
import type { FacilitatorClient } from '../../facilitator-client';
import { callSafely, type CreatorLogger, errorText } from '../../logger';
import type { ChannelBacklog, ObservedSettlement, ServerObserver } from '../../observer';
import type { CallOutbox } from './outbox';
import type { ChannelRequirements, ChannelSettings } from './settings';
import type { ChannelState, ChannelStore } from './store';
import { claimRetryMs } from './withdrawal';

/** The receiver authorizer's signature over the claim of what `states` charged. */
export function signClaims(account: PrivateKeyAccount, chainId: number, states: ChannelState[]): Promise<Hex> {
  return account.signTypedData({
    domain: batchSettlementDomain(chainId),
    types: claimBatchTypes,
    primaryType: 'ClaimBatch',
    message: {
      claims: states.map((s) => ({
        channelId: s.channelId,
        maxClaimableAmount: BigInt(s.signedMaxClaimable),
        totalClaimed: BigInt(s.chargedCumulativeAmount),
      })),
    },
  });
}

/** The receiver authorizer's signature over a refund. */
export function signRefund(account: PrivateKeyAccount, chainId: number, channelId: Hex, nonce: bigint, amount: bigint): Promise<Hex> {
  return account.signTypedData({
    domain: batchSettlementDomain(chainId),
    types: refundTypes,
    primaryType: 'Refund',
    message: { channelId, nonce, amount },
  });
}

/** Longest a forced claim round waits for another server's round on a shared store. */
const CLAIM_WAIT_MS = 30_000;
/** Pause between two asks for the shared claim lease while another server holds it. */
const CLAIM_WAIT_PAUSE_MS = 100;

export interface ClaimerOptions {
  store: ChannelStore;
  facilitator: FacilitatorClient;
  settings: ChannelSettings;
  chainId: number;
  /** The channel requirements claims are sent with (any skill's: they share receiver and token). */
  requirements: () => ChannelRequirements | undefined;
  /** The chain, to see withdrawals started on channels that make no calls. */
  chain?: ChannelReader | undefined;
  logger: CreatorLogger;
  now?: () => number;
  /** Call records the registry has are dropped from the states the claims write. */
  outbox?: CallOutbox;
  /** Told of each claim and settle sent. */
  observer?: ServerObserver | undefined;
}

/** What one round of claims did. */
export interface ClaimRound {
  /** Channels claimed. */
  channels: number;
  /** The claim transaction, when one was sent. */
  claim?: string;
  /** The settle transaction, when one was sent. */
  settle?: string;
}

export interface Claimer {
  /** Claims (and settles) now: every channel with an unclaimed charge when `all`, else those due. */
  /**
   * One claim round now (after the one in progress). With `wait`, a round another server of a
   * shared store is running is waited for and this one runs after it (up to {@link CLAIM_WAIT_MS}),
   * instead of being skipped: what the caller asked for is claimed when it returns.
   */
  run(all?: boolean, wait?: boolean): Promise<ClaimRound>;
  /** What the channels owe not yet claimed or settled, read from the store now. */
  backlog(): Promise<ChannelBacklog>;
  stop(): void;
}

/** Chain reads of one channel at most this often. */
const CHAIN_CHECK_MS = 5000;
/** A channel whose claim failed on its own, or a settle that failed, is tried again after this long. */
const FAILED_CLAIM_PAUSE_MS = 60_000;
/** The facilitator's answer to a settle with nothing claimed left to sweep. */
const NOTHING_TO_SETTLE = 'invalid_batch_settlement_evm_nothing_to_settle';
/** Our facilitator's answer to a claim row at or below what the chain holds claimed already. */
const NOT_ABOVE_CLAIMED = 'invalid_batch_settlement_evm_claim_not_above_claimed';

export function createClaimer(options: ClaimerOptions): Claimer {
  const { store, facilitator, settings, logger } = options;
  const now = options.now ?? Date.now;
  const checked = new Map<string, number>();
  /** Withdrawals read on chain (unix seconds) on channels whose state has not seen them yet. */
  const withdrawalsOnChain = new Map<string, number>();
  /** Channels whose claim failed on its own, left alone until then. */
  const failedUntil = new Map<string, number>();
  let running: Promise<ClaimRound> | undefined;
  let stopped = false;
  /** Since when claimed money waits for a settle: none known when undefined; 0 = due at once (see `started`). */
  let unsettledSince: number | undefined;
  /** Whether the first round looked for claims a previous run may have left unsettled. */
  let started = false;
  let settlePausedUntil = 0;

  const unclaimed = (s: ChannelState) => BigInt(s.chargedCumulativeAmount) - BigInt(s.totalClaimed);

  /** The channel's state with the withdrawal the chain showed, when the state has not seen it. */
  const withWithdrawal = (s: ChannelState): ChannelState =>
    s.withdrawRequestedAt === 0 ? { ...s, withdrawRequestedAt: withdrawalsOnChain.get(s.channelId) ?? 0 } : s;

  /** Whether a channel is due; reads its withdrawal from the chain now and then. */
  const due = async (s: ChannelState): Promise<boolean> => {
    if (unclaimed(s) >= settings.claimAbove || withWithdrawal(s).withdrawRequestedAt !== 0) return true;
    if (s.unclaimedSince !== 0 && now() - s.unclaimedSince >= settings.claimWithinMs) return true;
    if (!options.chain || now() - (checked.get(s.channelId) ?? 0) < CHAIN_CHECK_MS) return false;
    checked.set(s.channelId, now());
    const onChain = await options.chain.read(s.channelId).catch(() => undefined);
    if (onChain === undefined || onChain.withdrawInitiatedAt === 0) return false;
    withdrawalsOnChain.set(s.channelId, onChain.withdrawInitiatedAt);
    return true;
  };

  const tell = (type: ObservedSettlement['type'], outcome: ObservedSettlement['outcome']) =>
    callSafely(logger, 'observe', () => options.observer?.settlement?.({ type, outcome }));
  const ask = async (requirements: ChannelRequirements, payload: { type: 'claim' | 'settle' }) => {
    let answer: Record<string, unknown> | undefined;
    try {
      answer = await facilitator.forward('/settle', { x402Version: 2, accepted: requirements, payload }, requirements);
      return answer;
    } finally {
      // Nothing left to claim or settle (an earlier answer was lost) is no failure.
      const benign = answer?.errorReason === NOTHING_TO_SETTLE || answer?.errorReason === NOT_ABOVE_CLAIMED;
      tell(payload.type, answer?.success === true || benign ? 'ok' : 'failed');
    }
  };
  const refusal = (payload: { type: string }, answer: Record<string, unknown>) =>
    new Error(`${payload.type}: ${String(answer.errorReason ?? 'failed')} ${String(answer.errorMessage ?? '')}`.trim());
  const transactionOf = (answer: Record<string, unknown>) => (typeof answer.transaction === 'string' ? answer.transaction : '');
  /** Sweeps what was claimed when it is due: the transaction, '' when nothing was left, undefined when not due. */
  const settleIfDue = async (requirements: ChannelRequirements, all: boolean): Promise<string | undefined> => {
    const since = unsettledSince;
    if (since === undefined) return undefined;
    if (!all && (now() < settlePausedUntil || now() - since < settings.settleWithinMs)) return undefined;
    const payload = { type: 'settle' as const, receiver: requirements.payTo, token: requirements.asset };
    const answer = await ask(requirements, payload).catch((error: unknown) => {
      settlePausedUntil = now() + FAILED_CLAIM_PAUSE_MS;
      throw error;
    });
    if (answer.success === true || answer.errorReason === NOTHING_TO_SETTLE) {
      unsettledSince = undefined;
      return answer.success === true ? transactionOf(answer) : '';
    }
    settlePausedUntil = now() + FAILED_CLAIM_PAUSE_MS;
    throw refusal(payload, answer);
  };

  /** A claim the facilitator refused (not one it never answered): that channel waits a minute, less when its withdrawal ends sooner. */
  const refused = (s: ChannelState, error: unknown) => {
    if (error instanceof FacilitatorUnavailableError) return;
    const wait = claimRetryMs(settings, withWithdrawal(s), now(), FAILED_CLAIM_PAUSE_MS);
    failedUntil.set(s.channelId, now() + wait);
    logger.error(`a channel cannot be claimed; trying it again in ${Math.ceil(wait / 1000)} s`, {
      channel: s.channelId,
      error: errorText(error),
    });
  };

  const round = async (all: boolean): Promise<ClaimRound> => {
    const requirements = options.requirements();
    if (!requirements) return { channels: 0 };
    const states = await store.list();
    // A channel with nothing to claim is written only to drop the call records the registry has.
    const { outbox } = options;
    for (const s of states) {
      if (!outbox || unclaimed(s) > 0n || !outbox.droppable(s)) continue;
      await store.update(s.channelId, async (current) =>
        current ? { next: { ...current, unreported: outbox.trim(current) }, value: undefined } : { value: undefined },
      );
    }
    // Once after a start: a previous run may have claimed without settling (not when nothing was ever claimed).
    if (!started) {
      started = true;
      if (states.some((s) => BigInt(s.totalClaimed) > 0n)) unsettledSince = 0;
    }
    const open = states.filter((s) => unclaimed(s) > 0n);
    const chosen: ChannelState[] = [];
    for (const s of open) if ((failedUntil.get(s.channelId) ?? 0) <= now() && (all || (await due(s)))) chosen.push(s);
    if (chosen.length === 0) {
      const settle = await settleIfDue(requirements, all);
      return settle ? { channels: 0, settle } : { channels: 0 };
    }
    const claimOf = async (states: ChannelState[]) => {
      const claims = states.map((s) => ({
        voucher: { channel: s.config, maxClaimableAmount: s.signedMaxClaimable },
        signature: s.signature,
        totalClaimed: s.chargedCumulativeAmount,
      }));
      const signature = settings.authorizer ? await signClaims(settings.authorizer, options.chainId, states) : undefined;
      const payload = { type: 'claim' as const, claims, ...(signature ? { claimAuthorizerSignature: signature } : {}) };
      const answer = await ask(requirements, payload);
      if (answer.success === true) return transactionOf(answer);
      // The chain holds this much claimed already (a claim whose answer was lost): nothing is left to claim.
      if (states.length === 1 && answer.errorReason === NOT_ABOVE_CLAIMED) return '';
      throw refusal(payload, answer);
    };
    let claim = '';
    try {
      claim = await claimOf(chosen);
    } catch (error) {
      if (chosen.length === 1) {
        refused(chosen[0]!, error);
        throw error;
      }
      // One channel that cannot be claimed (e.g. drained) must not hold back the others: one by one.
      logger.warn('a batch claim failed; claiming channel by channel', { channels: chosen.length, error: errorText(error) });
      const claimed: ChannelState[] = [];
      for (const s of chosen) {
        try {
          claim = (await claimOf([s])) || claim;
          claimed.push(s);
        } catch (single) {
          refused(s, single);
        }
      }
      if (claimed.length === 0) throw error;
      chosen.splice(0, chosen.length, ...claimed);
    }
    for (const s of chosen) {
      // Read again on its next charge: the withdrawal may be over by then.
      withdrawalsOnChain.delete(s.channelId);
      await store.update(s.channelId, async (current) => {
        if (!current) return { value: undefined };
        const claimed = BigInt(s.chargedCumulativeAmount) > BigInt(current.totalClaimed) ? s.chargedCumulativeAmount : current.totalClaimed;
        const rest = BigInt(current.chargedCumulativeAmount) > BigInt(claimed);
        return {
          next: {
            ...current,
            totalClaimed: claimed,
            unclaimedSince: rest ? current.unclaimedSince || now() : 0,
            unreported: options.outbox ? options.outbox.trim(current) : current.unreported,
          },
          value: undefined,
        };
      });
    }
    unsettledSince ??= now();
    const settle = await settleIfDue(requirements, all || settings.settleWithinMs === 0);
    logger.info(settle ? `claimed ${chosen.length} channel(s) and settled` : `claimed ${chosen.length} channel(s)`, {
      claim,
      ...(settle ? { settle } : {}),
    });
    return { channels: chosen.length, claim, ...(settle ? { settle } : {}) };
  };

  const run = (all = false, wait = false): Promise<ClaimRound> => {
    // One round at a time; a forced round waits for the one in progress, then runs.
    const previous = running ?? Promise.resolve({ channels: 0 });
    // A store shared with other servers runs one claim round at a time among them: skipped here
    // then, or with `wait`, run once the other server's round has ended.
    const shared = async (): Promise<ClaimRound> => {
      const until = Date.now() + CLAIM_WAIT_MS;
      for (;;) {
        const done = await store.claims!(() => round(all));
        if (done || !wait || Date.now() > until || stopped) return done ?? { channels: 0 };
        await new Promise((resolve) => setTimeout(resolve, CLAIM_WAIT_PAUSE_MS));
      }
    };
    const alone = () => (store.claims ? shared() : round(all));
    const next = previous.catch(() => undefined).then(alone);
    running = next;
    void next
      .finally(() => {
        if (running === next) running = undefined;
      })
      .catch(() => undefined);
    return next;
  };

  const timer = setInterval(() => {
    if (stopped || running) return;
    run(false).catch((error: unknown) => {
      logger.warn('channel claim failed; retrying', { error: errorText(error) });
    });
  }, settings.claimIntervalMs);
  (timer as { unref?: () => void }).unref?.();

  return {
    run,
    async backlog() {
      const open = (await store.list()).filter((s) => unclaimed(s) > 0n);
      const since = Math.min(...open.map((s) => s.unclaimedSince || now()));
      const age = (at: number | undefined) => (at === undefined || !Number.isFinite(at) ? 0 : Math.max(0, (now() - at) / 1000));
      return {
        claimsDue: open.length,
        oldestClaimSeconds: age(since),
        unclaimed: open.reduce((sum, s) => sum + unclaimed(s), 0n),
        claiming: running !== undefined,
        unsettledSeconds: age(unsettledSince || undefined),
      };
    },
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
