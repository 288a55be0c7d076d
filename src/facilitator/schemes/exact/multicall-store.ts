/**
 * Persistence of Multicall3 settlements: a multicall transaction (table payment_batches) is recorded with its
 * members (their authorizations' `tx_hash`) before it is broadcast, in one database transaction
 * that takes only members still `settling` without a transaction, so no authorization is ever in
 * two sent transactions (single settlements are recorded under the same rule: store.ts). Outcomes are recorded once: the batch row's pending → final change
 * decides who records them (the settle call or the reconciler).
 */
import { and, asc, eq, gt, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Address, Hex } from 'viem';
import type { BatchReceipt } from 'skill-market/x402';
import type { Database } from '../../../db';
import { paymentAuthorizations as auths, paymentBatches } from '../../../db/schema';
import type { AuthorizationRow } from './store';
import { AlreadySent } from '../../relayer';

export type MulticallRow = typeof paymentBatches.$inferSelect;

/** A batch transaction about to be broadcast. */
export interface MulticallSubmission {
  txHash: Hex;
  network: string;
  relayer: Address;
  relayerNonce: number;
  memberIds: readonly string[];
}

/** What became of one member. */
export interface MemberOutcome {
  id: string;
  state: 'settled' | 'failed';
  reason?: string;
}

/** A batch transaction's final status and its members' outcomes. */
export interface MulticallOutcome {
  status: 'confirmed' | 'reverted' | 'dropped';
  blockNumber?: number;
  gasUsed?: number;
  error?: string;
  members: readonly MemberOutcome[];
}

/** Longest wait, in seconds, before a claimed authorization left unsent counts as orphaned. */
const ORPHAN_AFTER_SECONDS = 90;

export type MulticallStore = ReturnType<typeof createMulticallStore>;

export function createMulticallStore(db: Database) {
  return {
    /** Records the batch (pending) and takes its members; throws AlreadySent when one is not free. */
    async record(s: MulticallSubmission, now: Date): Promise<void> {
      await db.transaction(async (tx) => {
        const taken = await tx
          .update(auths)
          .set({ txHash: s.txHash, updatedAt: now })
          .where(and(inArray(auths.id, [...s.memberIds]), eq(auths.state, 'settling'), isNull(auths.txHash)))
          .returning({ id: auths.id });
        if (taken.length !== s.memberIds.length) throw new AlreadySent();
        await tx.insert(paymentBatches).values({
          txHash: s.txHash,
          network: s.network,
          relayer: s.relayer,
          relayerNonce: s.relayerNonce,
          size: s.memberIds.length,
          status: 'pending',
          submittedAt: now,
          updatedAt: now,
        });
      });
    },

    /**
     * Authorizations claimed for settling that no transaction took, still valid at `now`, whose
     * process must have stopped before sending them: claimed before `startedAt` (this process's
     * start: a restart resumes its predecessor's at once), or unsent for longer than a quarter of
     * what was left of their validity when claimed, at most {@link ORPHAN_AFTER_SECONDS} (a live
     * instance sends a claim within its batch wait, well under that). Sending one an instance was
     * still about to send is safe: a transaction takes its members only while no other has.
     */
    async orphans(now: Date, startedAt: Date, limit: number): Promise<(AuthorizationRow & { batchCall: string })[]> {
      const nowText = now.toISOString();
      const nowSeconds = String(Math.floor(now.getTime() / 1000));
      const rows = await db
        .select()
        .from(auths)
        .where(
          and(
            eq(auths.state, 'settling'),
            isNull(auths.txHash),
            isNotNull(auths.batchCall),
            gt(auths.validBefore, sql`${nowSeconds}::numeric`),
            sql`(${auths.updatedAt} < ${startedAt.toISOString()}::timestamptz
              or extract(epoch from (${nowText}::timestamptz - ${auths.updatedAt}))
                 > least(${ORPHAN_AFTER_SECONDS}, (${auths.validBefore} - extract(epoch from ${auths.updatedAt})) / 4))`,
          ),
        )
        .orderBy(asc(auths.updatedAt))
        .limit(limit);
      return rows as (AuthorizationRow & { batchCall: string })[];
    },

    /** settling → failed for members no transaction took (nothing was sent for them). */
    async failUnsent(ids: readonly string[], reason: string, now: Date): Promise<void> {
      await db
        .update(auths)
        .set({ state: 'failed', reason, updatedAt: now })
        .where(and(inArray(auths.id, [...ids]), eq(auths.state, 'settling'), isNull(auths.txHash)));
    },

    /** A batch the node refused (nothing is out): dropped, its members free for another batch. */
    async release(txHash: Hex, error: string, now: Date): Promise<void> {
      await db.transaction(async (tx) => {
        await tx
          .update(paymentBatches)
          .set({ status: 'dropped', error: error.slice(0, 300), updatedAt: now, finalizedAt: now })
          .where(and(eq(paymentBatches.txHash, txHash), eq(paymentBatches.status, 'pending')));
        await tx
          .update(auths)
          .set({ txHash: null, updatedAt: now })
          .where(and(eq(auths.txHash, txHash), eq(auths.state, 'settling')));
      });
    },

    /** Records the outcome once; false when the batch was already final. */
    async finalize(txHash: Hex, outcome: MulticallOutcome, now: Date): Promise<boolean> {
      return db.transaction(async (tx) => {
        const rows = await tx
          .update(paymentBatches)
          .set({
            status: outcome.status,
            blockNumber: outcome.blockNumber ?? null,
            gasUsed: outcome.gasUsed ?? null,
            error: outcome.error?.slice(0, 300) ?? null,
            updatedAt: now,
            finalizedAt: now,
          })
          .where(and(eq(paymentBatches.txHash, txHash), eq(paymentBatches.status, 'pending')))
          .returning({ txHash: paymentBatches.txHash });
        if (rows.length === 0) return false;
        for (const member of outcome.members) {
          await tx
            .update(auths)
            .set({ state: member.state, reason: member.reason ?? null, updatedAt: now })
            .where(and(eq(auths.id, member.id), eq(auths.txHash, txHash), eq(auths.state, 'settling')));
        }
        return true;
      });
    },

    /** The oldest pending batches, for the reconciler. */
    async pending(limit: number): Promise<MulticallRow[]> {
      return db
        .select()
        .from(paymentBatches)
        .where(eq(paymentBatches.status, 'pending'))
        .orderBy(asc(paymentBatches.submittedAt))
        .limit(limit);
    },

    /** The members of a batch that have no outcome yet. */
    async members(txHash: string): Promise<AuthorizationRow[]> {
      return db
        .select()
        .from(auths)
        .where(and(eq(auths.txHash, txHash), eq(auths.state, 'settling')));
    },

    /** A multicall and all its members (any state), or undefined when no multicall has this hash. */
    async withMembers(txHash: string): Promise<{ multicall: MulticallRow; members: AuthorizationRow[] } | undefined> {
      const hash = txHash.toLowerCase();
      const [multicall] = await db.select().from(paymentBatches).where(eq(paymentBatches.txHash, hash)).limit(1);
      if (!multicall) return undefined;
      const members = await db.select().from(auths).where(eq(auths.txHash, hash)).orderBy(asc(auths.createdAt));
      return { multicall, members };
    },
  };
}

/** The members' states as a batch receipt shows them: `settling` is pending until the receipt is read. */
const MEMBER_STATUS = { verified: 'pending', settling: 'pending', settled: 'settled', failed: 'failed' } as const;

/** The public form of a stored batch and its members. */
export function toMulticallReceipt(batch: MulticallRow, members: readonly AuthorizationRow[]): BatchReceipt {
  return {
    transaction: batch.txHash as Hex,
    status: batch.status,
    network: batch.network,
    relayer: batch.relayer as Address,
    blockNumber: batch.blockNumber,
    gasUsed: batch.gasUsed,
    error: batch.error,
    submittedAt: batch.submittedAt.toISOString(),
    updatedAt: batch.updatedAt.toISOString(),
    finalizedAt: batch.finalizedAt?.toISOString() ?? null,
    payments: members.map((m) => ({
      asset: m.asset as Address,
      payer: m.payer as Address,
      payee: m.payee as Address,
      amount: m.amount,
      nonce: m.nonce,
      status: MEMBER_STATUS[m.state],
      reason: m.reason,
    })),
  };
}
