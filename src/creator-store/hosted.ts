/**
 * Channels a facilitator keeps for the skill servers of a receiver (the `hosted_channels` table):
 * one state per channel, shared by every server and instance of the payee, whatever machine it
 * runs on. A call leases the channel (read the state, then write the next one under the lease),
 * so calls on a channel go one at a time everywhere and a voucher is charged once. A lease lapses
 * after the hold its server asked (a server that died mid-call), and a write under a lapsed lease
 * that another server has taken is refused: that call was not recorded, so it must not be answered
 * as paid. Waiting for a busy channel polls the row (calls on one channel rarely overlap: a payer
 * sends them one after the other).
 */
import { randomUUID } from 'node:crypto';
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import type { ChannelState } from 'skill-market/creator';
import { channelIdOf, type ChannelConfig } from 'skill-market/x402';
import type { Database } from '../db';
import { hostedChannelClaims, hostedChannels } from '../db/schema';

/** Longest lease a server may ask: a handler's longest timeout and a margin. */
export const MAX_HOLD_MS = 15 * 60_000;
/** Longest a lease request waits for a busy channel before answering busy. */
const WAIT_MS = 10_000;
const POLL_MS = [2, 5, 10, 20, 40];

type LeaseAnswer = { type: 'leased'; lease: string; state: ChannelState | null } | { type: 'busy' } | { type: 'forbidden'; why: string };
type CommitAnswer = { type: 'done' } | { type: 'lost' } | { type: 'invalid'; why: string };
/** What a commit does to the state: write `next`, delete it (`null`), or leave it (`undefined`). */
type Change = { next?: ChannelState | null };

export interface HostedChannels {
  lease(receiver: string, channelId: string, holdMs: number, config?: ChannelConfig): Promise<LeaseAnswer>;
  commit(receiver: string, channelId: string, lease: string, change: Change): Promise<CommitAnswer>;
  get(receiver: string, channelId: string): Promise<ChannelState | null>;
  list(receiver: string): Promise<ChannelState[]>;
  /** A claim round's lease for the receiver, or undefined while another server holds one. */
  claimLease(receiver: string, holdMs: number): Promise<string | undefined>;
  releaseClaim(receiver: string, lease: string): Promise<void>;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export function createHostedChannels(db: Database, chainId: number): HostedChannels {
  /** Why `config` is not a channel of `receiver` with id `channelId`, if so. */
  const wrongConfig = (receiver: string, channelId: string, config: ChannelConfig): string | undefined => {
    if (!same(config.receiver, receiver)) return 'the channel pays another receiver';
    try {
      if (!same(channelIdOf(config, chainId), channelId)) return 'the channel config does not hash to this channel id';
    } catch {
      return 'the channel config is malformed';
    }
    return undefined;
  };

  const take = async (receiver: string, channelId: string, holdMs: number) => {
    const lease = randomUUID();
    const until = sql`now() + ${holdMs} * interval '1 millisecond'`;
    const [row] = await db
      .update(hostedChannels)
      .set({ leaseId: lease, leaseUntil: until })
      .where(
        and(
          eq(hostedChannels.channelId, channelId),
          eq(hostedChannels.receiver, receiver),
          sql`(${hostedChannels.leaseId} is null or ${hostedChannels.leaseUntil} < now())`,
        ),
      )
      .returning({ state: hostedChannels.state });
    return row ? { lease, state: (row.state as ChannelState | null) ?? null } : undefined;
  };

  return {
    async lease(receiverIn, channelIdIn, holdMs, config) {
      const receiver = receiverIn.toLowerCase();
      const channelId = channelIdIn.toLowerCase();
      if (config) {
        const wrong = wrongConfig(receiver, channelId, config);
        if (wrong) return { type: 'forbidden', why: wrong };
        await db.insert(hostedChannels).values({ channelId, receiver }).onConflictDoNothing();
      }
      const deadline = Date.now() + WAIT_MS;
      for (let attempt = 0; ; attempt++) {
        const taken = await take(receiver, channelId, holdMs);
        if (taken) return { type: 'leased', ...taken };
        const [row] = await db
          .select({ receiver: hostedChannels.receiver })
          .from(hostedChannels)
          .where(eq(hostedChannels.channelId, channelId));
        if (!row) return { type: 'forbidden', why: 'no such channel here: a first lease names its config' };
        if (row.receiver !== receiver) return { type: 'forbidden', why: 'the channel pays another receiver' };
        if (Date.now() >= deadline) return { type: 'busy' };
        await new Promise((resolve) => setTimeout(resolve, POLL_MS[Math.min(attempt, POLL_MS.length - 1)]));
      }
    },

    async commit(receiverIn, channelIdIn, lease, { next }) {
      const receiver = receiverIn.toLowerCase();
      const channelId = channelIdIn.toLowerCase();
      const mine = and(eq(hostedChannels.channelId, channelId), eq(hostedChannels.receiver, receiver), eq(hostedChannels.leaseId, lease));
      if (next === null) {
        const gone = await db.delete(hostedChannels).where(mine).returning({ id: hostedChannels.channelId });
        return gone.length === 1 ? { type: 'done' } : { type: 'lost' };
      }
      if (next && !same(next.channelId, channelId)) return { type: 'invalid', why: 'the state names another channel' };
      const wrong = next ? wrongConfig(receiver, channelId, next.config) : undefined;
      if (wrong) return { type: 'invalid', why: wrong };
      const written = await db
        .update(hostedChannels)
        .set({
          leaseId: null,
          leaseUntil: null,
          ...(next ? { state: next, chargedCumulativeAmount: next.chargedCumulativeAmount, updatedAt: new Date() } : {}),
        })
        .where(mine)
        .returning({ id: hostedChannels.channelId });
      return written.length === 1 ? { type: 'done' } : { type: 'lost' };
    },

    async get(receiver, channelId) {
      const [row] = await db
        .select({ state: hostedChannels.state })
        .from(hostedChannels)
        .where(and(eq(hostedChannels.channelId, channelId.toLowerCase()), eq(hostedChannels.receiver, receiver.toLowerCase())));
      return (row?.state as ChannelState | null | undefined) ?? null;
    },

    async list(receiver) {
      const rows = await db
        .select({ state: hostedChannels.state })
        .from(hostedChannels)
        .where(and(eq(hostedChannels.receiver, receiver.toLowerCase()), isNotNull(hostedChannels.state)));
      return rows.map((r) => r.state as ChannelState);
    },

    async claimLease(receiverIn, holdMs) {
      const receiver = receiverIn.toLowerCase();
      const lease = randomUUID();
      const until = sql`now() + ${holdMs} * interval '1 millisecond'`;
      await db
        .insert(hostedChannelClaims)
        .values({ receiver, leaseId: '', leaseUntil: sql`now() - interval '1 second'` })
        .onConflictDoNothing();
      const [row] = await db
        .update(hostedChannelClaims)
        .set({ leaseId: lease, leaseUntil: until })
        .where(and(eq(hostedChannelClaims.receiver, receiver), sql`${hostedChannelClaims.leaseUntil} < now()`))
        .returning({ receiver: hostedChannelClaims.receiver });
      return row ? lease : undefined;
    },

    async releaseClaim(receiver, lease) {
      await db
        .update(hostedChannelClaims)
        .set({ leaseUntil: sql`now() - interval '1 second'` })
        .where(and(eq(hostedChannelClaims.receiver, receiver.toLowerCase()), eq(hostedChannelClaims.leaseId, lease)));
    },
  };
}
