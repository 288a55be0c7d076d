/**
 * The channel store of `market serve` when DATABASE_URL is set: the SDK's ChannelStore on the
 * `channel_vouchers` table, so several instances of one creator's skill server share their
 * payment channels. A call on a channel runs inside a transaction holding the channel's row lock
 * (`select … for update`, the row made first when the channel is new), so instances take a
 * channel's calls one at a time and a voucher is charged once; the new state is committed before
 * the call is answered. Within one process, calls on a channel queue before taking a connection.
 */
import { eq, isNotNull } from 'drizzle-orm';
import { type ChannelState, type ChannelStore, keyedChannelLock } from 'skill-market/creator';
import type { Database } from '../db';
import { channelVouchers } from '../db/schema';

export function databaseChannelStore(db: Database): ChannelStore {
  const lock = keyedChannelLock();
  return {
    update: (channelId, work) => {
      const id = channelId.toLowerCase();
      return lock(id, () =>
        db.transaction(async (tx) => {
          await tx.insert(channelVouchers).values({ channelId: id }).onConflictDoNothing();
          const [row] = await tx.select().from(channelVouchers).where(eq(channelVouchers.channelId, id)).for('update');
          const { next, value } = await work((row?.state as ChannelState | null) ?? undefined);
          if (next === null) await tx.delete(channelVouchers).where(eq(channelVouchers.channelId, id));
          else if (next) {
            await tx
              .update(channelVouchers)
              .set({ state: next, chargedCumulativeAmount: next.chargedCumulativeAmount, updatedAt: new Date() })
              .where(eq(channelVouchers.channelId, id));
          }
          return value;
        }),
      );
    },
    async get(channelId) {
      const [row] = await db.select().from(channelVouchers).where(eq(channelVouchers.channelId, channelId.toLowerCase()));
      return (row?.state as ChannelState | null) ?? undefined;
    },
    async list() {
      const rows = await db.select({ state: channelVouchers.state }).from(channelVouchers).where(isNotNull(channelVouchers.state));
      return rows.map((r) => r.state as ChannelState);
    },
    close: async () => {},
  };
}
