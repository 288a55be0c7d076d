/**
 * Where a skill server keeps the state of its payment channels (x402 `batch-settlement`, "Server:
 * State & Forwarding"): per channel its config, what it charged (`chargedCumulativeAmount`), the
 * latest voucher (`signedMaxClaimable`, `signature`) and its mirror of the chain. The voucher is
 * the money: a store writes it durably before the call that earned it is answered, and runs the
 * work on one channel one at a time, so one voucher is never charged twice. Two implementations
 * ship: {@link fileChannelStore} (the default, one process) and, in the `market` binary, a
 * PostgreSQL store that several instances of one creator's server share.
 */
import type { ChannelConfig, Hex } from '../../../x402/index';

/** One channel as the server knows it. Amounts are decimal strings of atomic units; times are ms unless named. */
export interface ChannelState {
  channelId: Hex;
  config: ChannelConfig;
  /** What this server has charged on the channel in all (the cumulative cost of the calls it answered). */
  chargedCumulativeAmount: string;
  /** `maxClaimableAmount` of the latest voucher the payer signed. */
  signedMaxClaimable: string;
  /** That voucher's signature. */
  signature: Hex;
  /** Mirrored from the chain (through the facilitator or an RPC): deposits minus withdrawals and refunds. */
  balance: string;
  /** Mirrored: what was claimed on chain. */
  totalClaimed: string;
  /** Mirrored: when the payer started a timed withdrawal, unix seconds; 0 when none. */
  withdrawRequestedAt: number;
  /** Mirrored: the next refund nonce. */
  refundNonce: string;
  /** When the mirrored fields were last read. */
  onchainSyncedAt: number;
  /** When the last paid call on the channel was answered. */
  lastRequestTimestamp: number;
  /** When the oldest charge not yet claimed was made; 0 when everything charged is claimed. */
  unclaimedSince: number;
  /**
   * The answer to the call the latest voucher paid for, sent again to a request that carries that
   * voucher again with the same input (its answer was lost on the way); absent when the answer was
   * larger than the store keeps or the state was written by an older version.
   */
  lastAnswer?: StoredAnswer;
  /**
   * The call records of this channel not yet known to have reached the registry (call tracking's
   * durable outbox), oldest first; absent when there are none or tracking is off.
   */
  unreported?: UnreportedCalls;
}

/**
 * Call records kept for the registry, as runs: `count` consecutive calls of `skill`, each charged
 * `amount`, the first taking the channel's cumulative charge to `first` (atomic units).
 */
export type UnreportedCalls = { skill: string; amount: string; first: string; count: number }[];

/** A paid answer as a channel keeps it for a resend: what the call was (skill and input digest), its body and its receipt. */
export interface StoredAnswer {
  /** Digest of the skill name and the input. */
  call: string;
  /** The success body as sent. */
  body: string;
  /** The `PAYMENT-RESPONSE` it carried, decoded. */
  receipt: Record<string, unknown>;
  /** The signed receipt it carried (the `X-Receipt` header's value), when the server signs them; absent in states of older versions. */
  signed?: string;
}

/** What {@link ChannelStore.update}'s work answers: the state to keep (`null` deletes it, absent keeps it as it was) and a value. */
export interface ChannelChange<T> {
  next?: ChannelState | null;
  value: T;
}

/** What a store sharing channels between servers may want to know of an update. */
export interface UpdateHint {
  /** The channel's config (a store that checks whose channel it is reads it from here for a new channel). */
  config?: ChannelConfig;
  /** Longest the work may take, ms (a store that leases the channel holds it this long at most). */
  holdMs?: number;
}

/** A store of channel states. */
export interface ChannelStore {
  /**
   * Runs `work` on the channel's current state while holding the channel: no other `update` of it
   * runs meanwhile, in this process or in any other sharing the store. What `work` answers as
   * `next` is written durably before this resolves; when `work` throws, nothing is written.
   */
  update<T>(channelId: Hex, work: (current: ChannelState | undefined) => Promise<ChannelChange<T>>, hint?: UpdateHint): Promise<T>;
  /** The channel's state as last written, without taking the channel. */
  get(channelId: Hex): Promise<ChannelState | undefined>;
  /** Every channel's state (for the claims). */
  list(): Promise<ChannelState[]>;
  /** Releases what the store holds (files, connections). */
  close(): Promise<void>;
  /**
   * A store shared by several servers that each run claims: runs a claim round alone among them,
   * or skips it (undefined) while another server runs one. Without it, every round runs.
   */
  claims?<T>(work: () => Promise<T>): Promise<T | undefined>;
}

/**
 * Runs async work one at a time per key, in arrival order (the in-process half of a channel lock).
 *
 * @example
 * const lock = keyedChannelLock();
 * await lock(channelId, async () => commit(channelId)); // a second call on the same channel waits for the first
 */
export function keyedMutex() {
  const tails = new Map<string, Promise<unknown>>();
  return async <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const before = tails.get(key) ?? Promise.resolve();
    const run = before.then(work, work);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    try {
      return await run;
    } finally {
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}

/**
 * A store in memory: for tests and throwaway servers (a restart forgets unclaimed vouchers).
 *
 * @example serve(skills, { channels: { store: memoryChannelStore() } });
 */
export function memoryChannelStore(): ChannelStore {
  const states = new Map<string, ChannelState>();
  const lock = keyedMutex();
  return {
    update: (channelId, work) =>
      lock(channelId.toLowerCase(), async () => {
        const key = channelId.toLowerCase();
        const { next, value } = await work(states.get(key));
        if (next === null) states.delete(key);
        else if (next) states.set(key, next);
        return value;
      }),
    get: async (channelId) => states.get(channelId.toLowerCase()),
    list: async () => [...states.values()],
    close: async () => {},
  };
}
