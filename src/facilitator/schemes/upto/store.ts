/**
 * The upto scheme's single-use ledger: each accepted authorization once under Permit2's own key
 * (network, asset, payer, nonce). Admissions run in the payer's lock (one per payer and asset,
 * across instances on PostgreSQL) so that what the payer's open authorizations may still take never
 * exceeds the balance and Permit2 allowance read in it; every state change after that is one
 * conditional statement, so two settles of one authorization never both win.
 */
import { and, asc, eq, gt, inArray, isNotNull, sql } from 'drizzle-orm';
import type { Address, Hex } from 'viem';
import { createKeyLock, type Database, type DatabaseKind } from '../../../db';
import { uptoAuthorizations as auths } from '../../../db/schema';

export type UptoRow = typeof auths.$inferSelect;

/** Permit2's single-use key of an authorization; the nonce as a decimal string. */
export interface UptoKey {
  network: string;
  asset: Address;
  payer: Address;
  nonce: string;
}

/** What an admission records. */
export interface NewUpto {
  key: UptoKey;
  payee: Address;
  facilitator: Address;
  maxAmount: bigint;
  deadline: bigint;
  payloadHash: string;
}

/** What an admission reads and writes inside the payer's lock. */
export interface UptoSection {
  /** Whether the key is taken, and what the payer's open authorizations of the asset may still take. */
  standing(key: UptoKey, nowSeconds: bigint): Promise<{ taken: boolean; open: bigint }>;
  insert(entry: NewUpto, state: 'verified' | 'settling', amount: bigint | undefined, now: Date): Promise<UptoRow | undefined>;
}

/** The advisory lock space of a payer's upto admissions (an arbitrary constant). */
const UPTO_PAYER_LOCK_SPACE = 7_202_612;

export function createUptoStore(db: Database, kind: DatabaseKind) {
  const lock = createKeyLock(db, kind, UPTO_PAYER_LOCK_SPACE);
  const keyIs = (key: UptoKey) =>
    and(eq(auths.network, key.network), eq(auths.asset, key.asset), eq(auths.payer, key.payer), eq(auths.nonce, key.nonce));

  const standing = async (on: Database, key: UptoKey, nowSeconds: bigint) => {
    const [row] = await on
      .select({
        taken: sql<boolean>`bool_or(${auths.nonce} = ${key.nonce})`,
        // A settling row may take its charge; a verified one its maximum, until its deadline.
        open: sql<string>`coalesce(sum(case when ${auths.state} in ('verified', 'settling') and ${auths.deadline} > ${nowSeconds.toString()}
          then coalesce(${auths.amount}, ${auths.maxAmount}) else 0 end), 0)`,
      })
      .from(auths)
      .where(and(eq(auths.network, key.network), eq(auths.asset, key.asset), eq(auths.payer, key.payer)));
    return { taken: row?.taken === true, open: BigInt(row?.open ?? '0') };
  };

  const insert = async (on: Database, entry: NewUpto, state: 'verified' | 'settling', amount: bigint | undefined, now: Date) => {
    const [row] = await on
      .insert(auths)
      .values({
        ...entry.key,
        payee: entry.payee,
        facilitator: entry.facilitator,
        maxAmount: entry.maxAmount,
        deadline: entry.deadline,
        payloadHash: entry.payloadHash,
        state,
        amount: amount ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning();
    return row;
  };

  return {
    /** Runs `section` while no other admission of the same payer and asset runs, here or in another process on this database. */
    exclusive<T>(key: UptoKey, section: (ledger: UptoSection) => Promise<T>): Promise<T> {
      return lock(`${key.network}|${key.asset}|${key.payer}`.toLowerCase(), (on) =>
        section({
          standing: (k, nowSeconds) => standing(on, k, nowSeconds),
          insert: (entry, state, amount, now) => insert(on, entry, state, amount, now),
        }),
      );
    },

    /** Whether an authorization of this key was ever accepted. */
    async taken(key: UptoKey): Promise<boolean> {
      const [row] = await db.select({ id: auths.id }).from(auths).where(keyIs(key)).limit(1);
      return row !== undefined;
    },

    /**
     * verified → settling with the charge `amount`, for exactly the verified payload and while it is
     * valid; only one caller ever gets the row.
     */
    async claimVerified(key: UptoKey, payloadHash: string, amount: bigint, nowSeconds: bigint, now: Date): Promise<UptoRow | undefined> {
      const [row] = await db
        .update(auths)
        .set({ state: 'settling', amount, updatedAt: now })
        .where(and(keyIs(key), eq(auths.state, 'verified'), eq(auths.payloadHash, payloadHash), gt(auths.deadline, nowSeconds)))
        .returning();
      return row;
    },

    /** The settlement transaction of a settling row, stored before it is broadcast. */
    async recordTx(id: string, txHash: Hex, now: Date): Promise<void> {
      await db
        .update(auths)
        .set({ txHash, updatedAt: now })
        .where(and(eq(auths.id, id), eq(auths.state, 'settling')));
    },

    /** settling → settled | failed. */
    async finish(id: string, state: 'settled' | 'failed', reason: string | null, now: Date): Promise<void> {
      await db
        .update(auths)
        .set({ state, reason, updatedAt: now })
        .where(and(eq(auths.id, id), inArray(auths.state, ['settling', 'verified'])));
    },

    /** Settlements sent whose outcome is not recorded (their receipt was not seen in time), oldest first. */
    async unfinished(limit: number): Promise<UptoRow[]> {
      return db
        .select()
        .from(auths)
        .where(and(eq(auths.state, 'settling'), isNotNull(auths.txHash)))
        .orderBy(asc(auths.updatedAt))
        .limit(limit);
    },

    /** The row of a key (tests, status reads). */
    async row(key: UptoKey): Promise<UptoRow | undefined> {
      const [row] = await db.select().from(auths).where(keyIs(key)).limit(1);
      return row;
    },
  };
}
