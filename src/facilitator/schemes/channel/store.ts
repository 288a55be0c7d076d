/**
 * The ledger of channel transactions (table `channel_operations`): each is recorded before it is
 * signed, its hash before it is broadcast, and every state change is one conditional statement,
 * so two requests or two instances never both send one operation.
 */
import { and, asc, eq, inArray, lt, or } from 'drizzle-orm';
import type { Address, Hex } from 'viem';
import type { Database } from '../../../db';
import { channelOperations as ops } from '../../../db/schema';
import { AlreadySent } from '../../relayer';

export type OperationRow = typeof ops.$inferSelect;

/** An operation to record: its unique key and the whole call. */
export interface NewOperation {
  key: string;
  network: string;
  kind: OperationRow['kind'];
  target: Address;
  callData: Hex;
}

/** A final outcome of a sent (or never sent) operation. */
export interface OperationOutcome {
  state: 'confirmed' | 'reverted' | 'failed';
  blockNumber?: number;
  error?: string;
}

export type ChannelStore = ReturnType<typeof createChannelStore>;

export function createChannelStore(db: Database) {
  return {
    /** Records a new operation `queued`; undefined when its key is taken (a replay or a concurrent twin). */
    async insert(op: NewOperation, now: Date): Promise<OperationRow | undefined> {
      const rows = await db
        .insert(ops)
        .values({ ...op, state: 'queued', createdAt: now, updatedAt: now })
        .onConflictDoNothing({ target: ops.key })
        .returning();
      return rows[0];
    },

    async byKey(key: string): Promise<OperationRow | undefined> {
      const rows = await db.select().from(ops).where(eq(ops.key, key)).limit(1);
      return rows[0];
    },

    /**
     * queued → sent with the signed transaction's hash, before it is broadcast; throws
     * {@link AlreadySent} when another sender recorded one first.
     */
    async recordSent(id: string, txHash: Hex, relayer: Address, relayerNonce: number, now: Date): Promise<void> {
      const rows = await db
        .update(ops)
        .set({ state: 'sent', txHash: txHash.toLowerCase(), relayer, relayerNonce, updatedAt: now })
        .where(and(eq(ops.id, id), eq(ops.state, 'queued')))
        .returning({ id: ops.id });
      if (rows.length === 0) throw new AlreadySent();
    },

    /** sent → queued: the node refused `txHash` (nothing is out) or never got it; the operation may be sent again. */
    async release(id: string, txHash: Hex, error: string, now: Date): Promise<boolean> {
      const rows = await db
        .update(ops)
        .set({ state: 'queued', txHash: null, relayer: null, relayerNonce: null, error, updatedAt: now })
        .where(and(eq(ops.id, id), eq(ops.state, 'sent'), eq(ops.txHash, txHash.toLowerCase())))
        .returning({ id: ops.id });
      return rows.length > 0;
    },

    /** queued | sent → final, once (the settle call and the resume pass may both see a receipt). */
    async finalize(id: string, outcome: OperationOutcome, now: Date): Promise<boolean> {
      const rows = await db
        .update(ops)
        .set({ state: outcome.state, blockNumber: outcome.blockNumber ?? null, error: outcome.error ?? null, updatedAt: now })
        .where(and(eq(ops.id, id), inArray(ops.state, ['queued', 'sent'])))
        .returning({ id: ops.id });
      return rows.length > 0;
    },

    /** Operations not final yet, created before `before`, oldest first. */
    async open(before: Date, limit: number): Promise<OperationRow[]> {
      return db
        .select()
        .from(ops)
        .where(and(or(eq(ops.state, 'queued'), eq(ops.state, 'sent')), lt(ops.createdAt, before)))
        .orderBy(asc(ops.createdAt))
        .limit(limit);
    },
  };
}
