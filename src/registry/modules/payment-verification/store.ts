import { and, asc, eq, inArray, isNotNull, isNull, lte, sql } from 'drizzle-orm';
import type { PaymentVerificationConfig } from '../../../config';
import type { Database } from '../../../db';
import { PAYMENT_REVERTED_REASON } from 'skill-market/registry';
import { BYTES32_PATTERN, rescaleAtomic, USDC_DECIMALS } from 'skill-market/x402';
import { type ChainConfig, tokenDecimals } from '../../../config/chain';
import { paymentVerifications, skillCalls, skills, usageRecords } from '../../../db/schema';
import { countBuyer, countPaidCall } from '../stats';
import { type CountFloor, countablePrice } from '../skills';
import { provenAddresses } from '../wallets';
import { emitEvent } from '../webhook-events';

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];
type Verification = typeof paymentVerifications.$inferSelect;

/** The listing a reported payment is checked against. */
export interface ListedSkill extends CountFloor {
  id: string;
  /** The listed price, micro-USDC: the payment is this much in the token's own atomic units. */
  priceAtomic: bigint;
  paymentAddress: string;
  network: string;
  /** Volume prices: a payment of one of their steps is checked for that amount. */
  tiers?: { steps: { priceAtomic: string }[] } | null;
}

/** What a payment of `skill` is checked for: a listed volume price when the call names one, else the listed price. */
function listedAmount(skill: ListedSkill, reported: bigint | null | undefined): bigint {
  if (reported == null || !skill.tiers) return skill.priceAtomic;
  return skill.tiers.steps.some((step) => BigInt(step.priceAtomic) === reported) ? reported : skill.priceAtomic;
}

const TX_HASH = /^0x[0-9a-f]{64}$/;

/** The registry's token and its decimals: what a listed price is paid in. */
type TokenOf = Pick<ChainConfig, 'network' | 'usdcDecimals'>;

/** Why a payment cannot match a price the token cannot express (fewer decimals than the price has). */
const UNPAYABLE_REASON = 'the listed price is not a whole number of the token’s atomic units';

/** Why a payment from the skill's own creator does not count: it would buy popularity for gas. */
const SELF_PAYMENT_REASON = 'a payment from the skill’s own payment address or another address of its creator is not a paid call';
/** Why a payment at a price just cut does not count yet (skills/count-floor.ts). */
const PRICE_CUT_REASON = 'paid at a price cut less than a day ago: calls count at the price before the cut until the cut has stood a day';
/** Why a payment counted for one skill does not count for another. */
const COUNTED_ELSEWHERE_REASON = 'this payment is already counted for another skill';
/** Why a bare-transaction report gave way to the skill server's call record naming the payment. */
const GAVE_WAY_REASON = 'this payment is counted for the skill whose server reported the call';

/**
 * Puts a reported payment reference up for an on-chain check and returns the check's id: the
 * existing one when the same report (skill, transaction, authorization nonce) was made before,
 * by anyone. A reference that is not a transaction hash is rejected at once. `created` tells
 * whether this report was the first.
 */
export async function nominatePayment(
  db: Database | Tx,
  chain: TokenOf,
  skill: ListedSkill,
  reference: string,
  now: Date,
  amount?: bigint | null,
): Promise<{ id: string; created: boolean }> {
  const [nominated] = await nominatePayments(db, chain, [{ skill, reference, nonce: null, amount }], now);
  return nominated!;
}

/**
 * {@link nominatePayment} for many references at once (a batch of call records); answers in the
 * order given. A reference named twice is `created` at most once. The reports of one payment
 * share one check: a bare transaction hash joins any check of that skill and transaction; a
 * report naming the payment by its nonce joins the check of that nonce, or takes over a bare
 * report's check still pending or found reverted (the consumer's client reported the same call
 * first; a reverted transaction moved nothing, so every payment in it is that one), or
 * starts its own (another payment of a batch).
 */
export async function nominatePayments(
  db: Database | Tx,
  chain: TokenOf,
  payments: readonly { skill: ListedSkill; reference: string; nonce: string | null; amount?: bigint | null }[],
  now: Date,
): Promise<{ id: string; created: boolean }[]> {
  if (payments.length === 0) return [];
  const rows = payments.map(({ skill, reference, nonce, amount }) => {
    const txHash = BYTES32_PATTERN.test(reference) ? reference.toLowerCase() : reference;
    const expectedAmount = rescaleAtomic(listedAmount(skill, amount), USDC_DECIMALS, tokenDecimals(chain, skill.network));
    const reason = !TX_HASH.test(txHash)
      ? 'not a transaction hash'
      : expectedAmount === undefined
        ? UNPAYABLE_REASON
        : countablePrice(skill, now) > skill.priceAtomic
          ? PRICE_CUT_REASON
          : undefined;
    return {
      skillId: skill.id,
      txHash,
      nonce: nonce?.toLowerCase() ?? null,
      expectedAmount: expectedAmount ?? 0n,
      payTo: skill.paymentAddress,
      network: skill.network,
      ...(reason === undefined ? {} : { status: 'rejected' as const, reason, decidedAt: now }),
      nextAttemptAt: now,
      createdAt: now,
    };
  });
  const key = (r: { skillId: string; txHash: string; nonce: string | null }) => `${r.skillId}\n${r.txHash}\n${r.nonce ?? ''}`;
  // One row per report, in one order for every caller, so concurrent batches never deadlock.
  const distinct = [...new Map(rows.map((r) => [key(r), r])).values()].sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
  const ids = new Map<string, string>();
  const created = new Set<string>();
  for (const row of distinct) {
    const existing = await db
      .select({
        id: paymentVerifications.id,
        nonce: paymentVerifications.nonce,
        status: paymentVerifications.status,
        reason: paymentVerifications.reason,
      })
      .from(paymentVerifications)
      .where(and(eq(paymentVerifications.skillId, row.skillId), eq(paymentVerifications.txHash, row.txHash)))
      .orderBy(asc(paymentVerifications.createdAt), asc(paymentVerifications.id))
      .for('update');
    const joined =
      row.nonce === null
        ? existing[0]
        : (existing.find((e) => e.nonce === row.nonce) ??
          (await takeOver(
            db,
            existing.find((e) => e.nonce === null && (e.status === 'pending' || e.reason === PAYMENT_REVERTED_REASON)),
            row.nonce,
            'status' in row ? undefined : row.expectedAmount,
          )));
    if (joined) {
      ids.set(key(row), joined.id);
      continue;
    }
    const [inserted] = await db.insert(paymentVerifications).values(row).onConflictDoNothing().returning({ id: paymentVerifications.id });
    if (inserted) {
      ids.set(key(row), inserted.id);
      created.add(key(row));
      continue;
    }
    // A concurrent report of the same key inserted it first.
    const [raced] = await db
      .select({ id: paymentVerifications.id })
      .from(paymentVerifications)
      .where(
        and(
          eq(paymentVerifications.skillId, row.skillId),
          eq(paymentVerifications.txHash, row.txHash),
          row.nonce === null ? isNull(paymentVerifications.nonce) : eq(paymentVerifications.nonce, row.nonce),
        ),
      );
    if (!raced) throw new Error('payment verification vanished after a conflicting insert');
    ids.set(key(row), raced.id);
  }
  return rows.map((r) => ({ id: ids.get(key(r))!, created: created.delete(key(r)) }));
}

/**
 * Names a bare report's check by the nonce of the payment it turned out to be, checked for the
 * amount that report lists (a volume price the bare report could not know).
 */
async function takeOver(
  db: Database | Tx,
  check: { id: string } | undefined,
  nonce: string,
  expectedAmount: bigint | undefined,
): Promise<{ id: string } | undefined> {
  if (!check) return undefined;
  const [taken] = await db
    .update(paymentVerifications)
    .set(expectedAmount === undefined ? { nonce } : { nonce, expectedAmount })
    .where(and(eq(paymentVerifications.id, check.id), isNull(paymentVerifications.nonce)))
    .returning({ id: paymentVerifications.id });
  return taken;
}

/** Pending checks whose time has come, oldest first. */
export function duePayments(db: Database, now: Date, limit: number): Promise<Verification[]> {
  return db
    .select()
    .from(paymentVerifications)
    .where(and(eq(paymentVerifications.status, 'pending'), lte(paymentVerifications.nextAttemptAt, now)))
    .orderBy(asc(paymentVerifications.nextAttemptAt))
    .limit(limit);
}

/** Takes a due check for `leaseSeconds`, so two registry instances never run the same one. */
export async function claimPayment(db: Database, id: string, now: Date, leaseSeconds: number): Promise<boolean> {
  const claimed = await db
    .update(paymentVerifications)
    .set({ nextAttemptAt: new Date(now.getTime() + leaseSeconds * 1000) })
    .where(and(eq(paymentVerifications.id, id), eq(paymentVerifications.status, 'pending'), lte(paymentVerifications.nextAttemptAt, now)))
    .returning({ id: paymentVerifications.id });
  return claimed.length > 0;
}

/**
 * The signed receipts of the calls paid by check `id`, held against what the chain shows it moved:
 * `matches`, or `mismatch` (flagged; the revenue counted is the chain's amount either way).
 */
async function checkReceipts(tx: Tx, id: string, amount: bigint): Promise<{ receiptAmount: bigint; createdAt: Date }[]> {
  const checked = await tx
    .update(skillCalls)
    .set({ receiptCheck: sql`case when ${skillCalls.receiptAmount} = ${amount.toString()}::numeric then 'matches' else 'mismatch' end` })
    .where(and(eq(skillCalls.paymentId, id), isNotNull(skillCalls.receiptAmount)))
    .returning({ check: skillCalls.receiptCheck, receiptAmount: skillCalls.receiptAmount, createdAt: skillCalls.createdAt });
  return checked.filter((c) => c.check === 'mismatch' && c.receiptAmount !== null) as { receiptAmount: bigint; createdAt: Date }[];
}

/** `receipt.mismatch` for each call of check `check` whose receipt names another amount than the chain's `amount`. */
async function tellMismatches(
  tx: Tx,
  skill: { creatorId: string; slug: string },
  check: Pick<Verification, 'txHash' | 'network'>,
  mismatches: readonly { receiptAmount: bigint; createdAt: Date }[],
  amount: bigint,
  now: Date,
): Promise<void> {
  for (const m of mismatches) {
    await emitEvent(tx, {
      userId: skill.creatorId,
      type: 'receipt.mismatch',
      at: now,
      data: {
        skill: skill.slug,
        transaction: check.txHash,
        network: check.network,
        receiptAmount: m.receiptAmount.toString(),
        chainAmount: amount.toString(),
        reportedAt: m.createdAt.toISOString(),
      },
    });
  }
}

/** What the chain shows for a check: the transfers it may be counted as (see checkPaymentOnChain). */
export interface FoundPayment {
  transfers: readonly { payer: string; logIndex: number }[];
  amount: bigint;
  blockNumber: bigint;
  /** How it was paid: `exact` (the listed price) unless the chain shows an `upto` settlement (what it moved). */
  scheme?: 'exact' | 'upto';
}

/**
 * Decides a check the chain confirmed and, in the same transaction, counts it: one paid call and
 * its amount as revenue, on the day it was first reported. A transfer counts once, for one skill:
 * the check takes the first of its transfers no other check holds. When all are held, it is a
 * repeat of a payment counted for the same skill (verified, not counted again), or else another
 * skill's payment (rejected) — unless this check names the payment by its authorization nonce (the
 * skill server's call record) and the holder is a bare-transaction report of another skill, which
 * then gives way. A payment from the skill's own payment address is rejected: it buys nothing but
 * gas. Answers what happened, or `false` when the check was no longer pending.
 */
export async function markVerified(
  db: Database,
  id: string,
  found: FoundPayment,
  now: Date,
): Promise<'counted' | 'repeat' | 'rejected' | false> {
  return db.transaction(async (tx) => {
    const [check] = await tx
      .select()
      .from(paymentVerifications)
      .where(and(eq(paymentVerifications.id, id), eq(paymentVerifications.status, 'pending')))
      .for('update');
    if (!check) return false;
    // One decision at a time per transaction hash, so two checks never take the same transfer.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${check.txHash}))`);
    const decide = (set: Partial<Verification>) =>
      tx
        .update(paymentVerifications)
        .set({ decidedAt: now, attempts: sql`${paymentVerifications.attempts} + 1`, ...set })
        .where(eq(paymentVerifications.id, id));
    const own = await ownAddresses(tx, check.skillId, check.payTo);
    const paid = found.transfers.filter((t) => !own.has(t.payer.toLowerCase()));
    if (paid.length === 0) {
      await decide({ status: 'rejected', reason: SELF_PAYMENT_REASON, payer: found.transfers[0]?.payer ?? null });
      return 'rejected';
    }
    const holders = await tx
      .select()
      .from(paymentVerifications)
      .where(
        and(
          eq(paymentVerifications.txHash, check.txHash),
          inArray(
            paymentVerifications.logIndex,
            paid.map((t) => t.logIndex),
          ),
        ),
      );
    const heldBy = new Map(holders.map((h) => [h.logIndex!, h]));
    const count = async (transfer: { payer: string; logIndex: number }) => {
      await decide({
        status: 'verified',
        reason: null,
        payer: transfer.payer,
        amount: found.amount,
        blockNumber: found.blockNumber,
        logIndex: transfer.logIndex,
        scheme: found.scheme ?? 'exact',
      });
      await countPaidCall(tx, check.skillId, found.amount, check.createdAt);
      await countBuyer(tx, check.skillId, transfer.payer, 1);
      const mismatches = await checkReceipts(tx, id, found.amount);
      // The creator hears of it in the same transaction: an event exists exactly when the call counts.
      const [skill] = await tx.select({ creatorId: skills.creatorId, slug: skills.slug }).from(skills).where(eq(skills.id, check.skillId));
      if (skill) {
        await emitEvent(tx, {
          userId: skill.creatorId,
          type: 'call.paid',
          at: now,
          data: {
            skill: skill.slug,
            amount: found.amount.toString(),
            payer: transfer.payer,
            scheme: found.scheme ?? 'exact',
            transaction: check.txHash,
            network: check.network,
            blockNumber: found.blockNumber.toString(),
            reportedAt: check.createdAt.toISOString(),
          },
        });
      }
      // After its call.paid (one ordering key): the creator hears of a receipt that disagrees with the chain.
      if (skill) await tellMismatches(tx, skill, check, mismatches, found.amount, now);
      return 'counted' as const;
    };
    const free = paid.find((t) => !heldBy.has(t.logIndex));
    if (free) return count(free);
    const yielding = check.nonce
      ? paid.find((t) => heldBy.get(t.logIndex)!.skillId !== check.skillId && heldBy.get(t.logIndex)!.nonce === null)
      : undefined;
    if (yielding) {
      const holder = heldBy.get(yielding.logIndex)!;
      await tx
        .update(paymentVerifications)
        .set({ status: 'rejected', reason: GAVE_WAY_REASON, logIndex: null, decidedAt: now })
        .where(eq(paymentVerifications.id, holder.id));
      await countPaidCall(tx, holder.skillId, holder.amount ?? found.amount, holder.createdAt, true);
      if (holder.payer) await countBuyer(tx, holder.skillId, holder.payer, -1);
      return count(yielding);
    }
    const same = paid.find((t) => heldBy.get(t.logIndex)!.skillId === check.skillId);
    if (same) {
      await decide({
        status: 'verified',
        reason: null,
        payer: same.payer,
        amount: found.amount,
        blockNumber: found.blockNumber,
        scheme: found.scheme ?? 'exact',
      });
      const mismatches = await checkReceipts(tx, id, found.amount);
      const [skill] = await tx.select({ creatorId: skills.creatorId, slug: skills.slug }).from(skills).where(eq(skills.id, check.skillId));
      if (skill) await tellMismatches(tx, skill, check, mismatches, found.amount, now);
      return 'repeat';
    }
    await decide({ status: 'rejected', reason: COUNTED_ELSEWHERE_REASON, payer: paid[0]!.payer });
    return 'rejected';
  });
}

export async function markRejected(db: Database, id: string, reason: string, now: Date): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx
      .update(paymentVerifications)
      .set({ status: 'rejected', reason: reason.slice(0, 500), decidedAt: now, attempts: sql`${paymentVerifications.attempts} + 1` })
      .where(and(eq(paymentVerifications.id, id), eq(paymentVerifications.status, 'pending')))
      .returning({ skillId: paymentVerifications.skillId, txHash: paymentVerifications.txHash, network: paymentVerifications.network });
    if (!row || reason !== PAYMENT_REVERTED_REASON) return;
    // A payment reported for the creator's skill reverted on chain: the call it paid for was not paid.
    const [skill] = await tx.select({ creatorId: skills.creatorId, slug: skills.slug }).from(skills).where(eq(skills.id, row.skillId));
    if (skill) {
      const data = { skill: skill.slug, transaction: row.txHash, network: row.network, reason };
      await emitEvent(tx, { userId: skill.creatorId, type: 'payment.reverted', at: now, data });
    }
  });
}

/** An inconclusive check: try again later (the pause doubles), or reject after the last attempt. */
export async function markInconclusive(
  db: Database,
  check: Verification,
  reason: string,
  now: Date,
  config: PaymentVerificationConfig,
): Promise<'retry' | 'rejected'> {
  const attempts = check.attempts + 1;
  if (attempts >= config.maxAttempts) {
    await markRejected(db, check.id, `${reason} after ${attempts} checks`, now);
    return 'rejected';
  }
  const pause = Math.min(config.retryBaseSeconds * 2 ** (attempts - 1), 3600);
  await db
    .update(paymentVerifications)
    .set({ attempts, reason: reason.slice(0, 500), nextAttemptAt: new Date(now.getTime() + pause * 1000) })
    .where(and(eq(paymentVerifications.id, check.id), eq(paymentVerifications.status, 'pending')));
  return 'retry';
}

/**
 * A reported reference that names no payment to the skill but a call paid over a payment channel,
 * as older consumer clients reported them (the voucher's digest, or the channel's deposit
 * transaction): its check is dropped, for there is no transfer to verify, reject or count, and a
 * usage record of the deposit names its channel and deposit instead (the history shows it as one).
 */
export async function dropChannelReport(
  db: Database,
  id: string,
  deposit?: { txHash: string; channelId: string | null; amount: bigint | null },
): Promise<void> {
  await db.transaction(async (tx) => {
    if (deposit?.channelId) {
      await tx
        .update(usageRecords)
        .set({ channelId: deposit.channelId.toLowerCase(), depositTransaction: deposit.txHash, depositAmount: deposit.amount })
        .where(and(eq(usageRecords.paymentId, id), isNull(usageRecords.channelId)));
    }
    await tx.delete(paymentVerifications).where(and(eq(paymentVerifications.id, id), eq(paymentVerifications.status, 'pending')));
  });
}

/** The skill's payment address and every address its creator has proven, lower case. */
async function ownAddresses(tx: Tx, skillId: string, payTo: string): Promise<Set<string>> {
  const [skill] = await tx.select({ creatorId: skills.creatorId }).from(skills).where(eq(skills.id, skillId));
  const own = skill ? ((await provenAddresses(tx, [skill.creatorId])).get(skill.creatorId) ?? new Set<string>()) : new Set<string>();
  return own.add(payTo.toLowerCase());
}
