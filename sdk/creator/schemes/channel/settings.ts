/**
 * `serve({ channels })`: whether and how a skill server sells calls over payment channels (x402
 * `batch-settlement`), and the terms it offers for them beside `exact`.
 */
import { getAddress, isAddress } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { type Address, type Hex, MAX_WITHDRAW_DELAY, MIN_WITHDRAW_DELAY, type PaymentTerms, parsePrice } from '../../../x402/index';
import { ServeConfigError } from '../../errors';
import { errorText } from '../../logger';
import type { ChannelStore } from './store';
import { CLAIM_LANDING_MS } from './withdrawal';

/**
 * Prices below this get channels by default: $0.01. One `exact` settlement costs about 64k gas,
 * $0.0006–0.001 on Base in 2026, i.e. 6–10 % of a $0.01 call and about all of a $0.001 one; a
 * channel costs one deposit, then a share of one claim and one settle per call (about 1.3k gas at
 * 100 calls a channel). From $0.01 up the gas of `exact` is a small part of the price and its
 * immediate transfer (no escrow, no claims to run) is worth more.
 *
 * @example serve(skills, { channels: { below: '$0.05' } }) // raise it
 */
export const DEFAULT_CHANNEL_THRESHOLD = '$0.01';
/**
 * Default withdraw delay of the channels a server offers: 1 hour. The payer's escape hatch takes
 * that long; the server claims everything charged well inside it (by age within 5 minutes, at once
 * when it sees a withdrawal), so an outage of the server or its facilitator of up to most of an
 * hour loses nothing. The contract allows 15 minutes to 30 days.
 *
 * @example serve(skills, { channels: { withdrawDelay: 900 } }) // the shortest
 */
export const DEFAULT_WITHDRAW_DELAY = 3600;

/**
 * How long claimed money may wait for its settle by default: 10 minutes. A claim makes the money
 * the receiver's inside the contract (no payer can take it back); the settle only moves everything
 * claimed for the receiver to its address, in one transfer of about 47k gas whatever the number of
 * channels. Settling once per claim round would pay that on every round of a busy server; within
 * 10 minutes, a creator sees the money at most that long after its claim.
 *
 * @example serve(skills, { channels: { settleWithinMs: 0 } }) // settle after every claim
 */
export const DEFAULT_SETTLE_WITHIN_MS = 10 * 60_000;

/**
 * Where the file channel store keeps its folder by default, relative to the working directory.
 *
 * @example fileChannelStore(join(process.cwd(), DEFAULT_CHANNELS_DIR), { repair: true }) // repair the default folder
 */
export const DEFAULT_CHANNELS_DIR = '.market/channels';

/** `serve({ channels })` as an object; `true` is all defaults, `false` turns channels off. */
export interface ChannelSettingsInput {
  /** Skills priced below this offer channels unless the skill says otherwise (`skill({ channels })`); default {@link DEFAULT_CHANNEL_THRESHOLD}. */
  below?: string;
  /** Offer channels for every skill (true) or none (false), whatever its price; default by price. */
  all?: boolean;
  /** Private key of the channels' receiver authorizer (signs claims and refunds here). Default: the facilitator's (`/supported`). */
  receiverAuthorizerKey?: Hex;
  /** Seconds; default {@link DEFAULT_WITHDRAW_DELAY}. */
  withdrawDelay?: number;
  /** Where channel state lives: a store, or a folder for the file store. Default `.market/channels` in the working directory. */
  store?: ChannelStore | string;
  /** The least deposit announced to clients (`extra.minDeposit`, as the reference server does), so one channel covers many calls; default none. */
  minDeposit?: string;
  /** Claim once a channel's unclaimed charge reaches this price; default `$1`. */
  claimAbove?: string;
  /**
   * Claim a charge at the latest this long after it was made, ms; default 5 minutes. A channel whose
   * payer started a timed withdrawal is claimed at once, and takes vouchers only while this, a claim
   * round and a minute for the claim to be mined fit before the withdrawal's end (later, 402
   * `invalid_batch_settlement_evm_withdrawal_pending`).
   */
  claimWithinMs?: number;
  /**
   * Settle what was claimed at the latest this long after the first claim not yet settled, ms;
   * default {@link DEFAULT_SETTLE_WITHIN_MS}; 0 settles after every claim.
   */
  settleWithinMs?: number;
  /** How often claims are looked for, ms; default 1000. */
  claimIntervalMs?: number;
  /** A channel mirror younger than this lets vouchers be checked here without the facilitator, ms; default 60 000. */
  freshMs?: number;
}

/** `serve({ channels })`. */
export type ChannelOption = boolean | ChannelSettingsInput;

/** The checked settings. */
export interface ChannelSettings {
  below: bigint;
  all: boolean | undefined;
  authorizer: PrivateKeyAccount | undefined;
  withdrawDelay: number;
  store: ChannelStore | string;
  minDeposit: bigint | undefined;
  claimAbove: bigint;
  claimWithinMs: number;
  settleWithinMs: number;
  claimIntervalMs: number;
  freshMs: number;
}

/** The settings of `option` for a token with `decimals`; undefined when channels are off. */
export function channelSettings(option: ChannelOption | undefined, decimals: number): ChannelSettings | undefined {
  if (option === false) return undefined;
  const given = option === true || option === undefined ? {} : option;
  const price = (value: string, name: string) => {
    try {
      return parsePrice(value, decimals);
    } catch (error) {
      throw new ServeConfigError(`channels.${name}: ${errorText(error)}`);
    }
  };
  const whole = (value: number, name: string, min: number, max = Number.MAX_SAFE_INTEGER) => {
    if (!Number.isInteger(value) || value < min || value > max)
      throw new ServeConfigError(`channels.${name} must be a whole number from ${min} to ${max}`);
    return value;
  };
  let authorizer: PrivateKeyAccount | undefined;
  if (given.receiverAuthorizerKey !== undefined) {
    try {
      authorizer = privateKeyToAccount(given.receiverAuthorizerKey);
    } catch {
      throw new ServeConfigError('channels.receiverAuthorizerKey must be a private key (0x + 64 hex)');
    }
  }
  const settings: ChannelSettings = {
    below: price(given.below ?? DEFAULT_CHANNEL_THRESHOLD, 'below'),
    all: given.all,
    authorizer,
    withdrawDelay: whole(given.withdrawDelay ?? DEFAULT_WITHDRAW_DELAY, 'withdrawDelay', MIN_WITHDRAW_DELAY, MAX_WITHDRAW_DELAY),
    store: given.store ?? DEFAULT_CHANNELS_DIR,
    minDeposit: given.minDeposit === undefined ? undefined : price(given.minDeposit, 'minDeposit'),
    claimAbove: price(given.claimAbove ?? '$1', 'claimAbove'),
    claimWithinMs: whole(given.claimWithinMs ?? 5 * 60_000, 'claimWithinMs', 1000),
    settleWithinMs: whole(given.settleWithinMs ?? DEFAULT_SETTLE_WITHIN_MS, 'settleWithinMs', 0),
    claimIntervalMs: whole(given.claimIntervalMs ?? 1000, 'claimIntervalMs', 10),
    freshMs: whole(given.freshMs ?? 60_000, 'freshMs', 0),
  };
  // A withdrawal started while the mirror was fresh (unseen by the calls) must still find every charge claimed, and mined.
  if (settings.claimWithinMs + settings.freshMs + CLAIM_LANDING_MS >= settings.withdrawDelay * 1000) {
    throw new ServeConfigError(
      `channels.claimWithinMs + channels.freshMs + ${CLAIM_LANDING_MS / 1000} s for the claim to be mined must stay below channels.withdrawDelay (claims must beat a withdrawal)`,
    );
  }
  return settings;
}

/** Whether a skill at `amount` offers channels: its own `channels` option, else the server's `all`, else its price. */
export function offersChannel(settings: ChannelSettings, amount: bigint, own: boolean | undefined): boolean {
  return own ?? settings.all ?? amount < settings.below;
}

/** The `batch-settlement` requirements of a skill: its `exact` terms with the channel's parameters. */
export type ChannelRequirements = {
  scheme: 'batch-settlement';
  network: string;
  amount: string;
  asset: Address;
  payTo: Address;
  maxTimeoutSeconds: number;
  extra: { receiverAuthorizer: Address; withdrawDelay: number; name: string; version: string; minDeposit?: string };
};

/** The channel requirements beside `terms`, with `receiverAuthorizer`. */
export function channelRequirements(
  terms: PaymentTerms,
  receiverAuthorizer: string,
  { withdrawDelay, minDeposit }: Pick<ChannelSettings, 'withdrawDelay' | 'minDeposit'>,
): ChannelRequirements {
  if (!isAddress(receiverAuthorizer, { strict: false }))
    throw new ServeConfigError(`receiverAuthorizer ${receiverAuthorizer} is not an address`);
  const { network, amount, asset, payTo, maxTimeoutSeconds, extra } = terms.requirements;
  return {
    scheme: 'batch-settlement',
    network,
    amount,
    asset: asset as Address,
    payTo: payTo as Address,
    maxTimeoutSeconds,
    extra: {
      receiverAuthorizer: getAddress(receiverAuthorizer),
      withdrawDelay,
      name: extra.name,
      version: extra.version,
      ...(minDeposit === undefined ? {} : { minDeposit: minDeposit.toString() }),
    },
  };
}
