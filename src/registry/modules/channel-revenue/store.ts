/**
 * The one place that counts calls paid over payment channels (x402 `batch-settlement`).
 *
 * A skill server reports each channel call with the channel id, the channel's cumulative charge
 * after the call (`cumulative`) and the call's own charge (`amount`), all atomic units. A new record
 * is a call of its skill at once (the call counters, `call.paid` to its creator); nothing it says
 * about money is believed: it is `earned` until the chain decides it, and then it is `counted` (one
 * paid call, `amount` of revenue, on the day it was reported) or `refused` with a reason (and its
 * call taken back out of the counters). The rule:
 *
 * 1. A record covers the interval (cumulative − amount, cumulative] of the channel's charges; it is
 *    refused at once unless 0 < amount ≤ cumulative ≤ 2^128 − 1. A skill has one record per
 *    channel and cumulative charge: a second one (a retry or a forgery) is a duplicate and never
 *    recorded. (Per skill, so another creator's records naming the channel cannot block these.)
 * 2. It counts only once the channel exists on the registry's network (its `ChannelCreated`
 *    config) with the skill's payment address as receiver and the network's USDC as token, and
 *    the channel's `totalClaimed` (read from the contract, after the claim is mined) is ≥ its
 *    cumulative. Another receiver, token or network refuses it; so does a receiver the skill's
 *    creator has not proven holding (wallets/proven.ts), and a payer that is the receiver or
 *    another address the creator has proven (a creator paying themselves buys no calls).
 * 3. Its interval must not overlap the interval of a record already counted for the channel (for
 *    any skill). Records are decided in order of cumulative (then of arrival), so of two
 *    overlapping records (the same cumulative, or an amount larger than the step from the previous
 *    cumulative) the lower one counts and the other is refused.
 *
 * Counted intervals are disjoint parts of (0, totalClaimed], so the revenue counted per channel
 * never exceeds what was claimed for it, whatever records are sent. A channel that never appears on
 * chain refuses its records after the configured number of checks. `settled_claimed` says how far
 * the receiver's settle sweeps reached: a counted record at or below it is settled.
 */
import { and, asc, eq, gt, inArray, lte, sql } from 'drizzle-orm';
import type { PaymentVerificationConfig } from '../../../config';
import type { Database } from '../../../db';
import { larger } from '../../lib/amounts';
import { channelCalls, paymentChannels, skills } from '../../../db/schema';
import { countBuyer, countCalls, countClaimedCalls, uncountCalls } from '../stats';
import { emitEvent, emitEvents } from '../webhook-events';
import { provenAddresses } from '../wallets';
import type { ChannelOnChain } from './chain-check';

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];
type Channel = typeof paymentChannels.$inferSelect;

/** Records marked counted per statement. */
const COUNTED_PER_UPDATE = 5_000;

/** The largest charge a channel can hold (uint128). */
export const MAX_CHANNEL_AMOUNT = 2n ** 128n - 1n;

/** A channel call as the intake accepted it. */
export interface ChannelCall {
  skillId: string;
  network: string;
  channelId: string;
  cumulative: bigint;
  amount: bigint;
  /** The EIP-712 digest of the payer's voucher for `cumulative` (null off eip155 networks). */
  voucherDigest: string | null;
  /** The volume price tier that priced it, where the listing allows it (analytics/tiers.ts); null: unknown. */
  tierAfter?: number | null;
}

/**
 * Records channel calls (inside the caller's transaction) and puts their channels under watch;
 * answers, in order, whether each was new (false: the skill already has a record of that channel
 * and cumulative charge, or an earlier record of the batch had them). A new record counts as a call
 * of its skill at once (its charge is earned: paid calls and revenue wait for the claim) and its
 * creator hears `call.paid` in the same transaction. A new channel is due at once;
 * a known one no sooner than `recheckSeconds` after its last check (or earlier if it was due
 * earlier): a channel paid for many calls a second is read once per that time, not once per batch
 * of records, and its revenue shows at most that much later than its claim. Two statements
 * whatever the batch's size: one upsert of its channels, one insert of its records, each in one
 * order (channel, cumulative, skill), so concurrent batches take their row locks in the same order.
 */
export async function recordChannelCalls(tx: Tx, calls: readonly ChannelCall[], now: Date, recheckSeconds: number): Promise<boolean[]> {
  if (calls.length === 0) return [];
  const byOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const channels = [...new Map(calls.map((c) => [c.channelId, c.network])).entries()].sort(([a], [b]) => byOrder(a, b));
  const at = sql`${now.toISOString()}::timestamptz`;
  const soonest = sql`greatest(${at}, coalesce(${paymentChannels.checkedAt}, ${at}) + make_interval(secs => ${recheckSeconds}))`;
  await tx
    .insert(paymentChannels)
    .values(channels.map(([channelId, network]) => ({ channelId, network, nextAttemptAt: now, createdAt: now })))
    .onConflictDoUpdate({
      target: paymentChannels.channelId,
      set: {
        status: 'watching',
        attempts: 0,
        nextAttemptAt: sql`case when ${paymentChannels.status} = 'watching' then least(${paymentChannels.nextAttemptAt}, ${soonest}) else ${soonest} end`,
      },
    });
  const keyOf = (c: { skillId: string; channelId: string; cumulative: bigint }) => `${c.skillId}\n${c.channelId}\n${c.cumulative}`;
  const first = new Map<string, ChannelCall>();
  for (const call of calls) if (!first.has(keyOf(call))) first.set(keyOf(call), call);
  const rows = [...first.values()].sort(
    (a, b) =>
      byOrder(a.channelId, b.channelId) ||
      (a.cumulative < b.cumulative ? -1 : a.cumulative > b.cumulative ? 1 : 0) ||
      byOrder(a.skillId, b.skillId),
  );
  const inserted = await tx
    .insert(channelCalls)
    .values(
      rows.map((c) => ({
        skillId: c.skillId,
        channelId: c.channelId,
        cumulative: c.cumulative,
        amount: c.amount,
        voucherDigest: c.voucherDigest,
        tierAfter: c.tierAfter ?? null,
        createdAt: now,
      })),
    )
    .onConflictDoNothing()
    .returning({ skillId: channelCalls.skillId, channelId: channelCalls.channelId, cumulative: channelCalls.cumulative });
  const fresh = new Set(inserted.map(keyOf));
  const recorded = rows.filter((c) => fresh.has(keyOf(c)));
  const perSkill = new Map<string, number>();
  for (const c of recorded) perSkill.set(c.skillId, (perSkill.get(c.skillId) ?? 0) + 1);
  await countCalls(tx, perSkill, now);
  await tellEarned(tx, recorded, now);
  return calls.map((c) => fresh.delete(keyOf(c)));
}

/** `call.paid` for each newly recorded channel call: its charge is earned, not yet claimed. */
async function tellEarned(tx: Tx, recorded: readonly ChannelCall[], now: Date): Promise<void> {
  if (recorded.length === 0) return;
  const owners = await tx
    .select({ id: skills.id, creatorId: skills.creatorId, slug: skills.slug })
    .from(skills)
    .where(inArray(skills.id, [...new Set(recorded.map((c) => c.skillId))]));
  const ownerOf = new Map(owners.map((o) => [o.id, o]));
  const known = await tx
    .select({ channelId: paymentChannels.channelId, payer: paymentChannels.payer })
    .from(paymentChannels)
    .where(inArray(paymentChannels.channelId, [...new Set(recorded.map((c) => c.channelId))]));
  const payerOf = new Map(known.map((c) => [c.channelId, c.payer]));
  await emitEvents(
    tx,
    'call.paid',
    recorded.flatMap((call) => {
      const owner = ownerOf.get(call.skillId);
      if (!owner) return [];
      const data = {
        skill: owner.slug,
        scheme: 'batch-settlement' as const,
        amount: call.amount.toString(),
        channelId: call.channelId,
        chargedCumulativeAmount: call.cumulative.toString(),
        network: call.network,
        payer: payerOf.get(call.channelId) ?? null,
        state: 'earned' as const,
        reportedAt: now.toISOString(),
      };
      return [{ userId: owner.creatorId, type: 'call.paid' as const, at: now, data }];
    }),
  );
}

/** Watched channels whose time has come, oldest first. */
export function dueChannels(db: Database, now: Date, limit: number): Promise<Channel[]> {
  return db
    .select()
    .from(paymentChannels)
    .where(and(eq(paymentChannels.status, 'watching'), lte(paymentChannels.nextAttemptAt, now)))
    .orderBy(asc(paymentChannels.nextAttemptAt))
    .limit(limit);
}

/** Takes a due channel for `leaseSeconds`, so two registry instances never check the same one at once. */
export async function leaseChannel(db: Database, channelId: string, now: Date, leaseSeconds: number): Promise<boolean> {
  const taken = await db
    .update(paymentChannels)
    .set({ nextAttemptAt: new Date(now.getTime() + leaseSeconds * 1000) })
    .where(and(eq(paymentChannels.channelId, channelId), eq(paymentChannels.status, 'watching'), lte(paymentChannels.nextAttemptAt, now)))
    .returning({ channelId: paymentChannels.channelId });
  return taken.length > 0;
}

/** What the registry expects of every channel it counts: its network and that network's USDC. */
export interface ChannelExpectation {
  network: string;
  token: string;
}

/** What one decision changed. */
export interface ChannelDecision {
  counted: number;
  refused: number;
  earned: number;
}

const lower = (s: string) => s.toLowerCase();

/**
 * Applies what the chain shows of a channel (see the header for the rule), in one transaction:
 * stores the channel's state, decides its earned records, counts the counted ones and tells the
 * creators (`channel.claimed`, and `channel.settled` when a sweep reached records counted before).
 */
export async function decideChannel(
  db: Database,
  channelId: string,
  onChain: ChannelOnChain,
  expected: ChannelExpectation,
  now: Date,
  config: PaymentVerificationConfig,
): Promise<ChannelDecision> {
  return db.transaction(async (tx) => {
    const [channel] = await tx.select().from(paymentChannels).where(eq(paymentChannels.channelId, channelId)).for('update');
    if (!channel) return { counted: 0, refused: 0, earned: 0 };
    // Claims and sweeps only grow: a read older than the one stored (a page's fresh read racing the
    // background's) never takes them back.
    const totalClaimed = larger(onChain.totalClaimed, channel.totalClaimed);
    const settledClaimed = larger(onChain.settledClaimed, channel.settledClaimed);
    const records = await tx
      .select({ call: channelCalls, paymentAddress: skills.paymentAddress, network: skills.network, creatorId: skills.creatorId })
      .from(channelCalls)
      .innerJoin(skills, eq(skills.id, channelCalls.skillId))
      .where(and(eq(channelCalls.channelId, channelId), eq(channelCalls.status, 'earned')))
      .orderBy(asc(channelCalls.cumulative), asc(channelCalls.createdAt), asc(channelCalls.id))
      .for('update', { of: channelCalls });
    // Of the counted records only those that matter now: any an earned one could overlap (counted
    // intervals are disjoint, so none at or below the lowest earned interval's start) and any a
    // settle sweep may newly reach. A channel of many calls is not read whole at every check.
    let from = channel.settledClaimed;
    for (const start of records.map(({ call }) => call.cumulative - call.amount)) {
      if (start < from) from = start;
    }
    const counted = await tx
      .select()
      .from(channelCalls)
      .where(and(eq(channelCalls.channelId, channelId), eq(channelCalls.status, 'counted'), gt(channelCalls.cumulative, from)))
      .orderBy(asc(channelCalls.cumulative));
    const overlaps = (c: { cumulative: bigint; amount: bigint }) =>
      counted.some((o) => c.cumulative - c.amount < o.cumulative && o.cumulative - o.amount < c.cumulative);
    const decision: ChannelDecision = { counted: 0, refused: 0, earned: 0 };
    const claimedFor = new Map<string, { calls: number; amount: bigint }>();
    /** Counted now: marked and added to the counters together after the loop. */
    const newlyCounted: (typeof channelCalls.$inferSelect)[] = [];
    /** Refused now: no call of the skill after all, taken back out of its calls after the loop. */
    const newlyRefused: { skillId: string; calledAt: Date }[] = [];
    const refuse = async (call: typeof channelCalls.$inferSelect, reason: string) => {
      await tx.update(channelCalls).set({ status: 'refused', reason, decidedAt: now }).where(eq(channelCalls.id, call.id));
      newlyRefused.push({ skillId: call.skillId, calledAt: call.createdAt });
      decision.refused += 1;
    };
    const proven = await provenAddresses(tx, [...new Set(records.map((r) => r.creatorId))]);
    for (const { call, paymentAddress, network, creatorId } of records) {
      const own = proven.get(creatorId) ?? new Set<string>();
      if (network !== expected.network || lower(onChain.token) !== lower(expected.token)) {
        await refuse(call, `the channel is not paid in ${expected.network} USDC, which this registry counts`);
      } else if (lower(onChain.receiver) !== lower(paymentAddress)) {
        await refuse(call, `the channel pays ${onChain.receiver}, not the skill’s payment address ${paymentAddress}`);
      } else if (!own.has(lower(onChain.receiver))) {
        await refuse(call, `the skill’s creator has not proven holding the channel’s receiver ${onChain.receiver}`);
      } else if (lower(onChain.payer) === lower(onChain.receiver) || own.has(lower(onChain.payer))) {
        await refuse(call, `the channel is paid by ${onChain.payer}, an address of the skill’s own creator: not a paid call`);
      } else if (overlaps(call)) {
        await refuse(call, 'its charge overlaps a call already counted for this channel');
      } else if (call.cumulative > totalClaimed) {
        decision.earned += 1;
      } else {
        newlyCounted.push(call);
        counted.push({ ...call, status: 'counted' });
        const sum = claimedFor.get(call.skillId) ?? { calls: 0, amount: 0n };
        claimedFor.set(call.skillId, { calls: sum.calls + 1, amount: sum.amount + call.amount });
        decision.counted += 1;
      }
    }
    if (newlyCounted.length > 0) {
      // In slices that stay far below PostgreSQL's limit of parameters per statement.
      for (let i = 0; i < newlyCounted.length; i += COUNTED_PER_UPDATE) {
        const ids = newlyCounted.slice(i, i + COUNTED_PER_UPDATE).map((c) => c.id);
        await tx.update(channelCalls).set({ status: 'counted', reason: null, decidedAt: now }).where(inArray(channelCalls.id, ids));
      }
      await countClaimedCalls(
        tx,
        newlyCounted.map((c) => ({ skillId: c.skillId, amount: c.amount, calledAt: c.createdAt })),
      );
    }
    // The channel's payer is a buyer of each skill it paid.
    for (const [skillId, { calls }] of claimedFor) await countBuyer(tx, skillId, onChain.payer, calls);
    await uncountCalls(tx, newlyRefused);
    // Newly settled: counted records between the previous sweep's reach and this one's.
    const settledFor = new Map<string, { calls: number; amount: bigint }>();
    if (settledClaimed > channel.settledClaimed) {
      for (const call of counted) {
        if (call.cumulative <= channel.settledClaimed || call.cumulative > settledClaimed) continue;
        const sum = settledFor.get(call.skillId) ?? { calls: 0, amount: 0n };
        settledFor.set(call.skillId, { calls: sum.calls + 1, amount: sum.amount + call.amount });
      }
    }
    const unsettled = counted.some((c) => c.cumulative > settledClaimed);
    const watching = decision.earned > 0 || unsettled;
    const attempts = channel.attempts + 1;
    await tx
      .update(paymentChannels)
      .set({
        payer: onChain.payer,
        receiver: onChain.receiver,
        token: onChain.token,
        balance: onChain.balance,
        totalClaimed,
        settledClaimed,
        withdrawAmount: onChain.withdrawAmount,
        withdrawInitiatedAt: onChain.withdrawInitiatedAt,
        status: watching ? 'watching' : 'idle',
        reason: null,
        attempts,
        nextAttemptAt: new Date(now.getTime() + pauseSeconds(attempts, config) * 1000),
        checkedAt: now,
      })
      .where(eq(paymentChannels.channelId, channelId));
    const state = { ...onChain, totalClaimed, settledClaimed };
    await tell(tx, 'channel.claimed', claimedFor, { channelId, onChain: state, now });
    await tell(tx, 'channel.settled', settledFor, { channelId, onChain: state, now });
    return decision;
  });
}

/** The pause before the next look at a watched channel: doubling from the retry base, at most an hour. */
function pauseSeconds(attempts: number, config: PaymentVerificationConfig): number {
  return Math.min(config.retryBaseSeconds * 2 ** Math.min(attempts - 1, 20), 3600);
}

async function tell(
  tx: Tx,
  type: 'channel.claimed' | 'channel.settled',
  bySkill: ReadonlyMap<string, { calls: number; amount: bigint }>,
  { channelId, onChain, now }: { channelId: string; onChain: ChannelOnChain; now: Date },
): Promise<void> {
  for (const [skillId, { calls, amount }] of bySkill) {
    const [skill] = await tx
      .select({ creatorId: skills.creatorId, slug: skills.slug, network: skills.network })
      .from(skills)
      .where(eq(skills.id, skillId));
    if (!skill) continue;
    await emitEvent(tx, {
      userId: skill.creatorId,
      type,
      at: now,
      data: {
        skill: skill.slug,
        channelId,
        network: skill.network,
        payer: onChain.payer,
        receiver: onChain.receiver,
        calls,
        amount: amount.toString(),
        totalClaimed: onChain.totalClaimed.toString(),
        settledClaimed: onChain.settledClaimed.toString(),
      },
    });
  }
}

/**
 * A check that could not read the channel, or found no such channel: try again after a doubling
 * pause; a channel still missing after the configured number of checks refuses its earned
 * records, and so at once does one on a network this registry does not read (`unreadable-here`).
 */
export async function markChannelUndecided(
  db: Database,
  channel: Channel,
  reason: string,
  kind: 'unreadable' | 'missing' | 'unreadable-here',
  now: Date,
  config: PaymentVerificationConfig,
): Promise<'retry' | 'refused'> {
  const attempts = channel.attempts + 1;
  return db.transaction(async (tx) => {
    if (kind === 'unreadable-here' || (kind === 'missing' && attempts >= config.maxAttempts)) {
      const why = kind === 'missing' ? `no such channel on chain after ${attempts} checks` : reason;
      const refused = await tx
        .update(channelCalls)
        .set({ status: 'refused', reason: why, decidedAt: now })
        .where(and(eq(channelCalls.channelId, channel.channelId), eq(channelCalls.status, 'earned')))
        .returning({ skillId: channelCalls.skillId, calledAt: channelCalls.createdAt });
      await uncountCalls(tx, refused);
      await tx
        .update(paymentChannels)
        .set({ status: 'idle', reason, attempts, checkedAt: now })
        .where(eq(paymentChannels.channelId, channel.channelId));
      return 'refused';
    }
    await tx
      .update(paymentChannels)
      .set({
        reason,
        attempts,
        checkedAt: now,
        nextAttemptAt: new Date(now.getTime() + pauseSeconds(attempts, config) * 1000),
      })
      .where(eq(paymentChannels.channelId, channel.channelId));
    return 'retry';
  });
}
