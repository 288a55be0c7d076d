/**
 * The facilitator's persistence: accepted authorizations (the single-use ledger) and settlement
 * receipts. Every state change is one conditional statement (a receipt and its authorization
 * change together in one statement of data-modifying CTEs), so concurrent requests and several
 * instances on one PostgreSQL never both win, and each step is one round trip.
 */
import { and, asc, eq, getTableColumns, isNull, lt, or, sql } from 'drizzle-orm';
import type { Address, Hex } from 'viem';
import { createKeyLock, prepared, preparedSql, within, type Database, type DatabaseKind } from '../../../db';
import { paymentAuthorizations as auths, paymentReceipts as receipts } from '../../../db/schema';
import type { SignerKind } from './chain';
import { AlreadySent } from '../../relayer';
import { REASONS } from './reasons';
import type { AuthorizationKey, PaymentReceipt, ReceiptStatus, SettlementStatus } from '../../types';

export type AuthorizationRow = typeof auths.$inferSelect;
export type ReceiptRow = typeof receipts.$inferSelect;

/**
 * The `transferWithAuthorization` calldata of an authorization, for each way its signature may be
 * checked: stored when it is claimed for settling, so that what a stopped process claimed but never
 * sent is sent by another (reconciler.ts) while still valid.
 */
export interface SettleCalls {
  /** v, r, s: undefined when the signature is not 65 bytes. */
  ecdsa: Hex | undefined;
  /** The signature as bytes (ERC-1271, ERC-6492). */
  bytes: Hex;
}

/** What verify (or a settle without verify) records about an accepted authorization. */
export interface NewAuthorization {
  key: AuthorizationKey;
  payee: Address;
  amount: string;
  validAfter: string;
  validBefore: string;
  payloadHash: string;
  signerKind: SignerKind;
}

/** A transaction about to be broadcast. */
export interface Submission {
  authorization: AuthorizationRow;
  txHash: Hex;
  relayer: Address;
  relayerNonce: number;
}

/** The final outcome of a transaction, and what it means for its authorization (if anything). */
export interface Outcome {
  status: Exclude<ReceiptStatus, 'pending'>;
  blockNumber?: number;
  error?: string;
  authorization?: { state: 'settled' | 'failed'; reason?: string };
}

/**
 * A payer's standing before a new authorization of one asset: whether this authorization's key
 * is taken (a replay), the amount their balance must still cover (see {@link PayerStanding.unconfirmed}),
 * and whether one of their settlements reverted since a given time (not counting reverts because
 * another transaction used the authorization first: that payment was made), or, in a batch, failed
 * for want of balance.
 */
export interface PayerStanding {
  taken: boolean;
  /**
   * What the payer's balance must still cover: their authorizations verified and still valid (a
   * settle may claim them) and those settling (claimed, not yet final).
   */
  unconfirmed: bigint;
  reverted: boolean;
  /**
   * The payer's authorizations of the asset, in any state. With `unconfirmed`, it shows whether the
   * ledger changed between two readings: neither moves unless a row was added or left the owed set.
   */
  count: number;
  /** The settling ones among them (nonce, amount), when there are at most {@link STANDING_SETTLING_LIMIT}. */
  settling: { nonce: Hex; amount: bigint }[] | undefined;
}

/** A payer's authorizations of one asset: what {@link PaymentStore.exclusive} serialises. */
export type PayerKey = Pick<AuthorizationKey, 'network' | 'asset' | 'payer'>;

/** What a section of {@link PaymentStore.exclusive} reads and writes, inside the payer's lock. */
export interface PayerSection {
  standing(key: AuthorizationKey, now: Date, revertedSince: Date): Promise<PayerStanding>;
  insert(entry: NewAuthorization, state: 'verified' | 'settling', now: Date, call?: Hex): Promise<AuthorizationRow | undefined>;
}

/** The advisory lock space of a payer's admissions (an arbitrary constant, as MIGRATION_LOCK_KEY). */
const PAYER_LOCK_SPACE = 7_202_611;

/** Most unconfirmed settlements a standing lists one by one. */
const STANDING_SETTLING_LIMIT = 32;

/** A claimed authorization and the payer's other unconfirmed amount of the same asset. */
export type ClaimedAuthorization = AuthorizationRow & { unconfirmedOthers: bigint };

/** A pending receipt with what the reconciler needs from its authorization. */
export type PendingReceipt = ReceiptRow & { validBefore: string; nonce: string };

export type PaymentStore = ReturnType<typeof createPaymentStore>;

export function createPaymentStore(db: Database, kind: DatabaseKind) {
  const keyIs = (key: AuthorizationKey) =>
    and(eq(auths.network, key.network), eq(auths.asset, key.asset), eq(auths.payer, key.payer), eq(auths.nonce, key.nonce));
  const statements = hotStatements(db);
  const lock = createKeyLock(db, kind, PAYER_LOCK_SPACE);

  /** One statement: is the key taken, what the balance must cover, a revert since `revertedSince`. */
  const standing = async (on: Database, key: AuthorizationKey, now: Date, revertedSince: Date): Promise<PayerStanding> => {
    const [row] = await statements
      .standing()
      .execute({ ...key, nowSeconds: String(unixSecondsOf(now)), since: revertedSince.toISOString() }, on);
    const listed = (typeof row?.settling === 'string' ? JSON.parse(row.settling) : (row?.settling ?? [])) as [Hex, string][];
    const settling = listed.map(([nonce, amount]) => ({ nonce, amount: BigInt(amount) }));
    const complete = settling.reduce((sum, s) => sum + s.amount, 0n) === BigInt(row?.settlingTotal ?? '0');
    return {
      taken: row?.taken === true,
      unconfirmed: BigInt(row?.unconfirmed ?? '0'),
      count: Number(row?.count ?? 0),
      reverted: row?.reverted === true,
      settling: complete ? settling : undefined,
    };
  };

  /** Records an accepted authorization; undefined when its key is already taken (a replay). */
  const insert = async (
    on: Database,
    entry: NewAuthorization,
    state: 'verified' | 'settling',
    now: Date,
    call?: Hex,
  ): Promise<AuthorizationRow | undefined> => {
    const rows = await within(statements.insert(), on).execute({
      call: state === 'settling' ? (call ?? null) : null,
      ...entry.key,
      payee: entry.payee,
      amount: entry.amount,
      validAfter: entry.validAfter,
      validBefore: entry.validBefore,
      payloadHash: entry.payloadHash,
      signerKind: entry.signerKind,
      state,
      now, // a Date: drizzle maps the timestamp columns' placeholders
    });
    return rows[0];
  };

  return {
    /** {@link PayerSection.standing} outside any lock (for an answer that decides nothing on the balance). */
    standing: (key: AuthorizationKey, now: Date, revertedSince: Date) => standing(db, key, now, revertedSince),

    /** {@link PayerSection.insert} outside any lock (tests; admissions insert inside {@link exclusive}). */
    insert: (entry: NewAuthorization, state: 'verified' | 'settling', now: Date, call?: Hex) => insert(db, entry, state, now, call),

    /**
     * Runs `section` while no other section of the same payer and asset runs, in this process or
     * any other on this database: what it reads of the payer's standing stays true until it has
     * inserted. Different payers never wait for each other (a waiting section holds no connection).
     */
    exclusive<T>(payer: PayerKey, section: (ledger: PayerSection) => Promise<T>): Promise<T> {
      const key = `${payer.network}|${payer.asset}|${payer.payer}`.toLowerCase();
      return lock(key, (on) =>
        section({
          standing: (k, now, since) => standing(on, k, now, since),
          insert: (entry, state, now, call) => insert(on, entry, state, now, call),
        }),
      );
    },

    /**
     * verified → settling for exactly the verified payload; only one caller ever gets the row. It
     * comes with the payer's other unconfirmed amount of the asset (as {@link PayerStanding.unconfirmed},
     * same statement). A claim adds nothing to what the balance must cover (verify counted it), so
     * it needs no lock: a balance read after it is compared with the amount it read.
     */
    async claimVerified(
      key: AuthorizationKey,
      payloadHash: string,
      calls: SettleCalls,
      now: Date,
    ): Promise<ClaimedAuthorization | undefined> {
      const [row] = await statements.claim().execute({
        ...key,
        payloadHash,
        now,
        nowSeconds: String(unixSecondsOf(now)),
        ecdsaCall: calls.ecdsa ?? calls.bytes,
        bytesCall: calls.bytes,
      });
      return row ? { ...row, unconfirmedOthers: BigInt(row.unconfirmedOthers ?? '0') } : undefined;
    },

    /** settling → failed when nothing was (or could be) sent. */
    async fail(id: string, reason: string, now: Date): Promise<void> {
      await db
        .update(auths)
        .set({ state: 'failed', reason, updatedAt: now })
        .where(and(eq(auths.id, id), eq(auths.state, 'settling')));
    },

    /**
     * Stores the receipt (pending) before the transaction is broadcast, so a crash cannot lose it;
     * throws {@link AlreadySent} when another transaction took the authorization meanwhile.
     */
    async recordSubmission(s: Submission, now: Date): Promise<void> {
      const a = s.authorization;
      const [row] = await statements.submission().execute({
        txHash: s.txHash,
        authorizationId: a.id,
        network: a.network,
        asset: a.asset,
        payer: a.payer,
        payee: a.payee,
        amount: a.amount,
        relayer: s.relayer,
        relayerNonce: s.relayerNonce,
        now: now.toISOString(),
      });
      if (Number(row?.recorded ?? 0) === 0) throw new AlreadySent();
    },

    /**
     * Records a transaction's final outcome once: false when it was already final (the settle
     * call and the reconciler may both see the receipt).
     */
    async finalize(txHash: Hex, outcome: Outcome, now: Date): Promise<boolean> {
      const change = outcome.authorization;
      const values = {
        txHash,
        status: outcome.status,
        blockNumber: outcome.blockNumber ?? null,
        error: outcome.error ?? null,
        now: now.toISOString(),
      };
      const [row] = change
        ? await statements.finalizeWithAuthorization().execute({ ...values, state: change.state, reason: change.reason ?? null })
        : await statements.finalize().execute(values);
      return Number(row?.finalized ?? 0) > 0;
    },

    async receipt(txHash: string): Promise<ReceiptRow | undefined> {
      const rows = await db.select().from(receipts).where(eq(receipts.txHash, txHash.toLowerCase())).limit(1);
      return rows[0];
    },

    /** Several authorizations by key, in one statement (at most a page of them). */
    async authorizations(keys: readonly AuthorizationKey[]): Promise<AuthorizationRow[]> {
      if (keys.length === 0) return [];
      return db
        .select()
        .from(auths)
        .where(or(...keys.map(keyIs)));
    },

    async authorization(key: AuthorizationKey): Promise<AuthorizationRow | undefined> {
      const rows = await db.select().from(auths).where(keyIs(key)).limit(1);
      return rows[0];
    },

    /** The oldest pending receipts, for the reconciler. */
    async pending(limit: number): Promise<PendingReceipt[]> {
      return db
        .select({ ...receiptColumns, validBefore: auths.validBefore, nonce: auths.nonce })
        .from(receipts)
        .innerJoin(auths, eq(auths.id, receipts.authorizationId))
        .where(eq(receipts.status, 'pending'))
        .orderBy(asc(receipts.submittedAt))
        .limit(limit);
    },

    /**
     * A pending transaction that is not out: the node refused it, or never got it (its process
     * stopped between recording and broadcasting it). Dropped with `error`, its authorization free
     * to be sent again while still `settling` (returned, with its calldata). Undefined when the
     * receipt was no longer pending.
     */
    async release(txHash: Hex, error: string, now: Date): Promise<(AuthorizationRow & { batchCall: string }) | undefined> {
      return db.transaction(async (tx) => {
        const dropped = await tx
          .update(receipts)
          .set({ status: 'dropped', error: error.slice(0, 300), updatedAt: now, finalizedAt: now })
          .where(and(eq(receipts.txHash, txHash), eq(receipts.status, 'pending')))
          .returning({ id: receipts.authorizationId });
        if (dropped.length === 0) return undefined;
        const [row] = await tx
          .update(auths)
          .set({ txHash: null, updatedAt: now })
          .where(and(eq(auths.txHash, txHash), eq(auths.state, 'settling')))
          .returning();
        return row?.batchCall ? (row as AuthorizationRow & { batchCall: string }) : undefined;
      });
    },

    /**
     * Authorizations claimed for settling that never got a transaction (the process stopped in
     * between) and have expired, so none can follow: settling → failed. Returns how many.
     */
    async abandonExpired(nowSeconds: number, reason: string, now: Date): Promise<number> {
      const rows = await db
        .update(auths)
        .set({ state: 'failed', reason, updatedAt: now })
        .where(and(eq(auths.state, 'settling'), isNull(auths.txHash), lt(auths.validBefore, sql`${String(nowSeconds)}::numeric`)))
        .returning({ id: auths.id });
      return rows.length;
    },
  };
}

const p = (name: string) => sql.placeholder(name);
const unixSecondsOf = (date: Date) => Math.floor(date.getTime() / 1000);
/**
 * The rows of `alias` a payer's balance must still cover: settling, or verified and still valid
 * (a settle may claim it). A verified authorization that expired can never move money here.
 */
const owed = (alias: string) => {
  const t = sql.raw(alias);
  return sql`(${t}.state = 'settling' or (${t}.state = 'verified' and ${t}.valid_before > ${p('nowSeconds')}::numeric))`;
};
const keyPlaceholders = () =>
  and(eq(auths.network, p('network')), eq(auths.asset, p('asset')), eq(auths.payer, p('payer')), eq(auths.nonce, p('nonce')));
/** The receipt's final status; `returning authorization_id`, for the authorization's change. */
const finalReceipt = sql`update payment_receipts
  set status = ${p('status')}, block_number = ${p('blockNumber')}, error = ${p('error')},
      updated_at = ${p('now')}::timestamptz, finalized_at = ${p('now')}::timestamptz
  where tx_hash = ${p('txHash')} and status = 'pending'
  returning authorization_id`;

/** The statements of every paid call, prepared once per database (values as placeholders). */
function hotStatements(db: Database) {
  return {
    standing: () =>
      preparedSql<{ taken: boolean; unconfirmed: string; count: number; settlingTotal: string; settling: unknown; reverted: boolean }>(
        db,
        'facilitator_payer_standing',
        () => sql`select
          exists(select 1 from payment_authorizations
                 where network = ${p('network')} and asset = ${p('asset')} and payer = ${p('payer')} and nonce = ${p('nonce')}) as taken,
          (select coalesce(sum(amount), 0)::text from payment_authorizations u
           where payer = ${p('payer')} and asset = ${p('asset')} and network = ${p('network')} and ${owed('u')}) as unconfirmed,
          (select count(*)::int from payment_authorizations
           where payer = ${p('payer')} and asset = ${p('asset')} and network = ${p('network')}) as count,
          (select coalesce(sum(amount), 0)::text from payment_authorizations
           where payer = ${p('payer')} and asset = ${p('asset')} and network = ${p('network')} and state = 'settling') as "settlingTotal",
          (select coalesce(json_agg(json_build_array(s.nonce, s.amount::text)), '[]'::json) from (
             select nonce, amount from payment_authorizations
             where payer = ${p('payer')} and asset = ${p('asset')} and network = ${p('network')} and state = 'settling'
             limit ${sql.raw(String(STANDING_SETTLING_LIMIT))}) s) as settling,
          exists(select 1 from payment_receipts r join payment_authorizations a on a.id = r.authorization_id
                 where r.payer = ${p('payer')} and r.asset = ${p('asset')} and r.network = ${p('network')} and r.status = 'reverted'
                   and r.finalized_at > ${p('since')}::timestamptz
                   and a.reason is distinct from ${REASONS.nonceAlreadyUsed})
          or exists(select 1 from payment_authorizations a join payment_batches b on b.tx_hash = a.tx_hash
                 where a.network = ${p('network')} and a.asset = ${p('asset')} and a.payer = ${p('payer')} and a.state = 'failed'
                   and a.reason = ${REASONS.insufficientBalance} and a.updated_at > ${p('since')}::timestamptz) as reverted`,
      ),
    insert: () =>
      prepared(db, 'facilitator_insert_authorization', (d) =>
        d
          .insert(auths)
          .values({
            network: p('network'),
            asset: p('asset'),
            payer: p('payer'),
            nonce: p('nonce'),
            payee: p('payee'),
            amount: p('amount'),
            validAfter: p('validAfter'),
            validBefore: p('validBefore'),
            payloadHash: p('payloadHash'),
            signerKind: p('signerKind'),
            state: p('state'),
            batchCall: p('call'),
            createdAt: p('now'),
            updatedAt: p('now'),
          })
          .onConflictDoNothing({ target: [auths.network, auths.asset, auths.payer, auths.nonce] })
          .returning()
          .prepare('facilitator_insert_authorization'),
      ),
    claim: () =>
      prepared(db, 'facilitator_claim_verified', (d) =>
        d
          .update(auths)
          .set({
            state: 'settling',
            updatedAt: p('now') as unknown as Date,
            batchCall: sql`case when ${auths.signerKind} = 'ecdsa' then ${p('ecdsaCall')} else ${p('bytesCall')} end`,
          })
          .where(and(keyPlaceholders(), eq(auths.state, 'verified'), eq(auths.payloadHash, p('payloadHash'))))
          .returning({
            ...getTableColumns(auths),
            unconfirmedOthers: sql<string>`(select coalesce(sum(o.amount), 0)::text from payment_authorizations o
              where o.payer = ${auths.payer} and o.asset = ${auths.asset} and o.network = ${auths.network}
                and ${owed('o')} and o.id <> ${auths.id})`,
          })
          .prepare('facilitator_claim_verified'),
      ),
    submission: () =>
      preparedSql<{ recorded: number }>(
        db,
        'facilitator_record_submission',
        () => sql`with taken as (
          update payment_authorizations set tx_hash = ${p('txHash')}, updated_at = ${p('now')}::timestamptz
          where id = ${p('authorizationId')} and state = 'settling' and tx_hash is null
          returning id
        ), receipt as (
          insert into payment_receipts
            (tx_hash, authorization_id, network, asset, payer, payee, amount, relayer, relayer_nonce, status, submitted_at, updated_at)
          select ${p('txHash')}, id, ${p('network')}, ${p('asset')}, ${p('payer')}, ${p('payee')}, ${p('amount')},
                 ${p('relayer')}, ${p('relayerNonce')}, 'pending', ${p('now')}::timestamptz, ${p('now')}::timestamptz
          from taken
          returning authorization_id
        )
        select count(*)::int as recorded from receipt`,
      ),
    finalize: () =>
      preparedSql<{ finalized: number }>(
        db,
        'facilitator_finalize',
        () => sql`with receipt as (${finalReceipt}) select count(*)::int as finalized from receipt`,
      ),
    finalizeWithAuthorization: () =>
      preparedSql<{ finalized: number }>(
        db,
        'facilitator_finalize_with_authorization',
        () => sql`with receipt as (${finalReceipt}),
          authorization_change as (
            update payment_authorizations set state = ${p('state')}, reason = ${p('reason')}, updated_at = ${p('now')}::timestamptz
            where id = (select authorization_id from receipt) and state = 'settling'
            returning id
          )
          select count(*)::int as finalized from receipt`,
      ),
  };
}

const receiptColumns = {
  txHash: receipts.txHash,
  authorizationId: receipts.authorizationId,
  network: receipts.network,
  asset: receipts.asset,
  payer: receipts.payer,
  payee: receipts.payee,
  amount: receipts.amount,
  relayer: receipts.relayer,
  relayerNonce: receipts.relayerNonce,
  status: receipts.status,
  blockNumber: receipts.blockNumber,
  error: receipts.error,
  submittedAt: receipts.submittedAt,
  updatedAt: receipts.updatedAt,
  finalizedAt: receipts.finalizedAt,
};

/** The public form of a stored receipt. */
export function toPaymentReceipt(row: ReceiptRow): PaymentReceipt {
  return {
    transaction: row.txHash as Hex,
    status: row.status,
    network: row.network,
    asset: row.asset as Address,
    payer: row.payer as Address,
    payee: row.payee as Address,
    amount: row.amount,
    relayer: row.relayer as Address,
    blockNumber: row.blockNumber,
    error: row.error,
    submittedAt: row.submittedAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    finalizedAt: row.finalizedAt?.toISOString() ?? null,
  };
}

/** The ledger's states as the outside sees them: `settling` is pending until the reconciler knows. */
const STATUS_OF_STATE = { verified: 'unsettled', settling: 'pending', settled: 'settled', failed: 'failed' } as const;

/** An authorization's outcome as the outside sees it. */
export function statusOf(row: AuthorizationRow): SettlementStatus {
  const status = STATUS_OF_STATE[row.state];
  const answer: SettlementStatus = {
    status,
    network: row.network,
    payer: row.payer as Address,
    transaction: (row.txHash ?? '') as SettlementStatus['transaction'],
  };
  if (status === 'failed' && row.reason) answer.reason = row.reason;
  return answer;
}
