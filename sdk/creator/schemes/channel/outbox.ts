/**
 * The durable outbox of channel call records: each call's record (skill, charge, the channel's
 * cumulative charge after it) is kept in the channel's state, written with the charge and the
 * voucher that earned it in the one durable write a call makes already, until call tracking says
 * the registry has it. After a restart the records still kept are sent again (the registry takes a
 * record once per skill, channel and cumulative charge, so a record sent twice counts once).
 *
 * Records are kept as runs: consecutive calls of one skill at one charge are one entry, so a channel
 * whose records wait through a registry outage keeps a few entries, not one per call. A record
 * the registry has is dropped at the channel's next write (a call, a claim); the claim rounds write
 * a channel with nothing left to claim only to drop such records, so none is sent again at a restart.
 */
import type { ChannelState, UnreportedCalls } from './store';

/** One call record as the outbox keeps it. */
interface KeptRecord {
  skill: string;
  /** The call's charge, atomic units. */
  amount: bigint;
  /** The channel's cumulative charge after the call. */
  cumulative: bigint;
}

export interface CallOutbox {
  /** The records `state` keeps, with those the registry has dropped, and `record` added. */
  add(state: ChannelState, record: KeptRecord): UnreportedCalls | undefined;
  /** The records `state` keeps, without those the registry has. */
  trim(state: ChannelState): UnreportedCalls | undefined;
  /** The registry has the record of the call that took the channel to `cumulative` (or refused it for good). */
  acknowledge(channelId: string, cumulative: string): void;
  /** Whether `state` keeps records the registry has (a write would drop them). */
  droppable(state: ChannelState): boolean;
  /** Every record `state` keeps, oldest first. */
  records(state: ChannelState): KeptRecord[];
}

/** The records of `runs`, oldest first. */
function expand(runs: UnreportedCalls): KeptRecord[] {
  const records: KeptRecord[] = [];
  for (const run of runs) {
    const amount = BigInt(run.amount);
    for (let i = 0n; i < BigInt(run.count); i++) records.push({ skill: run.skill, amount, cumulative: BigInt(run.first) + i * amount });
  }
  return records;
}

/** `record` after `runs`: the last run grows when it is the same skill at the same charge, the next step on. */
function append(runs: UnreportedCalls, record: KeptRecord): UnreportedCalls {
  const last = runs.at(-1);
  const amount = record.amount.toString();
  if (
    last &&
    last.skill === record.skill &&
    last.amount === amount &&
    BigInt(last.first) + BigInt(last.count) * record.amount === record.cumulative
  ) {
    return [...runs.slice(0, -1), { ...last, count: last.count + 1 }];
  }
  return [...runs, { skill: record.skill, amount, first: record.cumulative.toString(), count: 1 }];
}

/** `runs` without the records whose cumulative charge is in `done`, each run cut around them (no run is expanded). */
function without(runs: UnreportedCalls, done: ReadonlySet<string>): UnreportedCalls {
  const gone = [...done].map(BigInt);
  const left: UnreportedCalls = [];
  for (const run of runs) {
    const first = BigInt(run.first);
    const amount = BigInt(run.amount);
    const count = BigInt(run.count);
    const cuts = [
      ...new Set(
        gone.filter((c) => c >= first && (c - first) % amount === 0n && (c - first) / amount < count).map((c) => (c - first) / amount),
      ),
    ].sort((a, b) => (a < b ? -1 : 1));
    let from = 0n;
    for (const at of [...cuts, count]) {
      if (at > from) left.push({ ...run, first: (first + from * amount).toString(), count: Number(at - from) });
      from = at + 1n;
    }
  }
  return left;
}

/**
 * The outbox of one server; `enabled` false (no call tracking) keeps no record and drops those an
 * earlier run kept.
 */
export function createCallOutbox(enabled: boolean): CallOutbox {
  /** Per channel, the cumulative charges of records the registry has that a state may still keep. */
  const acknowledged = new Map<string, Set<string>>();
  const trim = (state: ChannelState): UnreportedCalls | undefined => {
    if (!enabled) return undefined;
    const runs = state.unreported;
    const key = state.channelId.toLowerCase();
    const done = acknowledged.get(key);
    if (!runs || runs.length === 0) {
      acknowledged.delete(key);
      return undefined;
    }
    if (!done) return runs;
    // Every acknowledgement now is of a record this state keeps or one an earlier write dropped.
    acknowledged.delete(key);
    const left = without(runs, done);
    return left.length > 0 ? left : undefined;
  };
  return {
    trim,
    add(state, record) {
      if (!enabled || record.amount <= 0n) return trim(state);
      return append(trim(state) ?? [], record);
    },
    acknowledge(channelId, cumulative) {
      if (!enabled) return;
      const key = channelId.toLowerCase();
      const done = acknowledged.get(key) ?? new Set<string>();
      done.add(cumulative);
      acknowledged.set(key, done);
    },
    records: (state) => (enabled && state.unreported ? expand(state.unreported) : []),
    droppable: (state) => (state.unreported !== undefined && !enabled) || acknowledged.has(state.channelId.toLowerCase()),
  };
}
