/**
 * Executions reported by a skill's creator (its skill server), one or a batch at a time: each
 * record is checked on its own (an unknown skill, another creator's skill or a bad amount refuses
 * that record only), and all accepted ones are recorded in one transaction. A paymentRef is
 * recorded once per skill, however often it is sent; with one, the call counts once its payment is
 * verified on chain; without one it counts at once as an unpaid call. A call paid over a payment
 * channel (channelId + chargedCumulativeAmount) is recorded once per channel and cumulative charge:
 * a call at once, a paid call and revenue once the chain shows it claimed (channel-revenue).
 */
import type { CallBody, CallOutcome } from 'skill-market/registry';
import { and, eq, inArray, isNotNull } from 'drizzle-orm';
import { paymentVerifications, skillCalls } from '../../../db/schema';
import { AppError } from '../../../http';
import type { ServiceContext } from '../../context';
import { nominatePayments } from '../payment-verification';
import { type ChannelCall, channelCallOf, recordChannelCalls } from '../channel-revenue';
import { priceToAtomic } from '../skills';
import { type SkillFacts, skillsByIds } from './skill-facts';
import { countCalls, countTrialCalls } from '../stats';
import { chainRefusal, receiptRefusal } from './receipts';
import { tokenDecimals } from '../../../config/chain';
import { believedTier } from './tiers';

/** Largest amount a call record stores (a uint256, as a token can hold). */
const MAX_STORED_AMOUNT = 2n ** 256n - 1n;

type Accepted = {
  index: number;
  skill: SkillFacts;
  amount: bigint | null;
  paymentRef: string | null;
  nonce: string | null;
  /** The amount the record's signed receipt names, and how it stands against the chain. */
  receipt?: { amount: bigint; check: 'pending' | 'matches' };
  /** The volume price tier that priced it, where the listing allows it (tiers.ts). */
  tier: number | null;
};

const refused = (reason: NonNullable<CallOutcome['reason']>, message: string): CallOutcome => ({ status: 'refused', reason, message });

/** Records a batch of call records of `userId`'s skills; one outcome per record, in order. */
export async function recordCalls(ctx: ServiceContext, userId: string, calls: readonly CallBody[]): Promise<CallOutcome[]> {
  const ids = [...new Set(calls.map((c) => c.skillId))];
  const byId = await skillsByIds(ctx, ids);
  const outcomes: CallOutcome[] = new Array(calls.length);
  const accepted: Accepted[] = [];
  const channelCalls: { index: number; call: ChannelCall }[] = [];
  const trials: { index: number; skillId: string; ref: string }[] = [];
  for (const [index, call] of calls.entries()) {
    const skill = byId.get(call.skillId);
    if (!skill) outcomes[index] = refused('unknown-skill', 'Skill not found');
    else if (skill.creatorId !== userId) outcomes[index] = refused('not-yours', 'Only the skill’s creator can record its calls');
    else if (call.kind === 'trial') {
      const why = trialProblem(call);
      if (why) outcomes[index] = refused('invalid-amount', why);
      else trials.push({ index, skillId: skill.id, ref: `trial:${call.paymentRef}` });
    } else if (call.channelId !== undefined || call.chargedCumulativeAmount !== undefined) {
      const decimals = tokenDecimals(ctx.config.chain, skill.network);
      const channel = channelCallOf(call, skill, decimals, ctx.clock.now());
      // A channel's receipt names the record's charge and cumulative charge; the chain's claims decide revenue as always.
      const bad = typeof channel === 'string' ? undefined : await receiptRefusal(call, skill, channel.amount, decimals);
      if (typeof channel === 'string') outcomes[index] = refused('invalid-amount', channel);
      else if (bad) outcomes[index] = refused('invalid-receipt', `Receipt refused: ${bad}`);
      else
        channelCalls.push({ index, call: { ...channel, tierAfter: believedTier(call, skill, channel.amount, decimals, ctx.clock.now()) } });
    } else {
      try {
        // Atomic units as sent; the older decimal form (whole tokens) is converted here, once.
        const decimals = tokenDecimals(ctx.config.chain, skill.network);
        const amount =
          call.amountAtomic !== undefined
            ? BigInt(call.amountAtomic)
            : call.amount === undefined
              ? null
              : priceToAtomic(call.amount, 'amount', decimals);
        if (amount !== null && amount > MAX_STORED_AMOUNT)
          throw new AppError('VALIDATION', 'Invalid request: field "amountAtomic": too large');
        const bad = await receiptRefusal(call, skill, amount, decimals);
        if (bad) {
          outcomes[index] = refused('invalid-receipt', `Receipt refused: ${bad}`);
          continue;
        }
        accepted.push({
          index,
          skill,
          amount,
          paymentRef: call.paymentRef ?? null,
          nonce: call.paymentRef && call.paymentNonce ? call.paymentNonce.toLowerCase() : null,
          tier: believedTier(call, skill, amount, decimals, ctx.clock.now()),
          ...(call.receipt && skill.receiptSigner
            ? { receipt: { amount: BigInt(call.receipt.payload.amount), check: 'pending' as const } }
            : {}),
        });
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        outcomes[index] = refused('invalid-amount', error.message);
      }
    }
  }
  // A payment already counted for another skill is not this skill's call.
  const elsewhere = await countedElsewhere(ctx, accepted);
  for (let i = accepted.length - 1; i >= 0; i--) {
    const a = accepted[i]!;
    const countsFor = elsewhere.get(`${a.paymentRef?.toLowerCase()}\n${a.nonce}`);
    if (countsFor === undefined || countsFor === a.skill.id) continue;
    outcomes[a.index] = refused('counted-elsewhere', 'This payment already counts as a call of another skill');
    accepted.splice(i, 1);
  }
  // A receipt of a payment the chain check already decided is held against what the chain showed.
  const shown = await chainAmounts(ctx, accepted);
  for (let i = accepted.length - 1; i >= 0; i--) {
    const a = accepted[i]!;
    const onChain = a.receipt && shown.get(`${a.skill.id}\n${a.paymentRef?.toLowerCase()}\n${a.nonce ?? ''}`);
    if (!a.receipt || onChain === undefined) continue;
    const bad = chainRefusal(a.receipt.amount, onChain);
    if (!bad) a.receipt.check = 'matches';
    else {
      outcomes[a.index] = refused('invalid-receipt', `Receipt refused: ${bad}`);
      accepted.splice(i, 1);
    }
  }
  if (accepted.length === 0 && channelCalls.length === 0 && trials.length === 0) return outcomes;

  const now = ctx.clock.now();
  /** Skills whose public counters changed (the read cache is told). */
  const changed = new Set<string>();
  // One lock order for every batch (skill, then reference), so concurrent batches never deadlock.
  const key = (a: Accepted) => `${a.skill.id}\n${a.paymentRef ?? ''}\n${a.nonce ?? ''}`;
  const ordered = [...accepted].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.index - b.index));
  const inserted = await ctx.db.transaction(async (tx) => {
    // Channels first: the channel check locks a channel, then the counters, in that order too.
    const fresh = await recordChannelCalls(
      tx,
      channelCalls.map((c) => c.call),
      now,
      ctx.config.payments.retryBaseSeconds,
    );
    for (const [i, c] of channelCalls.entries()) {
      outcomes[c.index] = { status: fresh[i] ? 'recorded' : 'duplicate' };
      if (fresh[i]) changed.add(c.call.skillId);
    }
    const paid = ordered.filter((a) => a.paymentRef !== null);
    const nominated = await nominatePayments(
      tx,
      ctx.config.chain,
      paid.map((a) => ({ skill: a.skill, reference: a.paymentRef!, nonce: a.nonce, amount: a.amount })),
      now,
    );
    const paymentIds = new Map(paid.map((a, i) => [key(a), nominated[i]!.id]));
    const rows =
      ordered.length === 0
        ? []
        : await tx
            .insert(skillCalls)
            .values(
              ordered.map((a) => ({
                skillId: a.skill.id,
                amount: a.amount,
                paymentRef: a.paymentRef,
                paymentNonce: a.nonce,
                paymentId: paymentIds.get(key(a)) ?? null,
                receiptAmount: a.receipt?.amount ?? null,
                receiptCheck: a.receipt?.check ?? null,
                tierAfter: a.tier,
                createdAt: now,
              })),
            )
            .onConflictDoNothing()
            .returning({ skillId: skillCalls.skillId, paymentRef: skillCalls.paymentRef, paymentNonce: skillCalls.paymentNonce });
    const unpaid = new Map<string, number>();
    for (const row of rows) if (row.paymentRef === null) unpaid.set(row.skillId, (unpaid.get(row.skillId) ?? 0) + 1);
    await countCalls(tx, unpaid, now);
    await recordTrialCalls(tx, trials, outcomes, changed, now);
    return rows;
  });
  // A reference inserted now is recorded for its first record in the batch; the rest are duplicates.
  const fresh = new Set(inserted.filter((r) => r.paymentRef !== null).map((r) => `${r.skillId}\n${r.paymentRef}\n${r.paymentNonce ?? ''}`));
  for (const a of accepted) {
    const recorded = a.paymentRef === null || fresh.delete(key(a));
    outcomes[a.index] = { status: recorded ? 'recorded' : 'duplicate' };
    if (recorded) changed.add(a.skill.id);
  }
  for (const skillId of changed) ctx.reads?.skillChanged(skillId);
  return outcomes;
}

/** Why a trial call record cannot be taken: it moves nothing and is named by its sign-in nonce. */
function trialProblem(call: CallBody): string | undefined {
  if (!call.paymentRef) return 'A trial call names its sign-in nonce as paymentRef';
  if (call.channelId !== undefined || call.paymentNonce !== undefined) return 'A trial call has no payment';
  const amount = call.amountAtomic ?? (call.amount === undefined ? '0' : String(call.amount));
  return /^0*(\.0*)?$/.test(amount) ? undefined : 'A trial call’s amount is 0';
}

/** Trial calls: one row each (amount 0), once per nonce; counted as trial calls only (never calls, paid calls or revenue). */
async function recordTrialCalls(
  tx: Parameters<Parameters<ServiceContext['db']['transaction']>[0]>[0],
  trials: readonly { index: number; skillId: string; ref: string }[],
  outcomes: CallOutcome[],
  changed: Set<string>,
  now: Date,
): Promise<void> {
  if (trials.length === 0) return;
  const rows = await tx
    .insert(skillCalls)
    .values(trials.map((t) => ({ skillId: t.skillId, amount: 0n, paymentRef: t.ref, createdAt: now })))
    .onConflictDoNothing()
    .returning({ skillId: skillCalls.skillId, paymentRef: skillCalls.paymentRef });
  const fresh = new Set(rows.map((r) => `${r.skillId}\n${r.paymentRef}`));
  const added = new Map<string, number>();
  for (const t of trials) {
    const recorded = fresh.delete(`${t.skillId}\n${t.ref}`);
    outcomes[t.index] = { status: recorded ? 'recorded' : 'duplicate' };
    if (recorded) {
      added.set(t.skillId, (added.get(t.skillId) ?? 0) + 1);
      changed.add(t.skillId);
    }
  }
  await countTrialCalls(tx, added);
}

/** One call record, as `POST /analytics/call` takes it: a refusal is an error; false when already recorded. */
export async function recordCall(ctx: ServiceContext, userId: string, call: CallBody): Promise<boolean> {
  const [outcome] = await recordCalls(ctx, userId, [call]);
  if (outcome!.status !== 'refused') return outcome!.status === 'recorded';
  const code =
    outcome!.reason === 'unknown-skill'
      ? 'NOT_FOUND'
      : outcome!.reason === 'not-yours'
        ? 'FORBIDDEN'
        : outcome!.reason === 'counted-elsewhere' || outcome!.reason === 'invalid-receipt'
          ? 'CONFLICT'
          : 'VALIDATION';
  throw new AppError(code, outcome!.message!);
}

/** The skill each already-counted payment (transaction and nonce) among the records counts for. */
async function countedElsewhere(ctx: ServiceContext, accepted: readonly Accepted[]): Promise<Map<string, string>> {
  const named = accepted.filter((a) => a.paymentRef !== null && a.nonce !== null);
  if (named.length === 0) return new Map();
  const rows = await ctx.db
    .select({ txHash: paymentVerifications.txHash, nonce: paymentVerifications.nonce, skillId: paymentVerifications.skillId })
    .from(paymentVerifications)
    .where(
      and(
        inArray(
          paymentVerifications.txHash,
          named.map((a) => a.paymentRef!.toLowerCase()),
        ),
        isNotNull(paymentVerifications.logIndex),
        isNotNull(paymentVerifications.nonce),
      ),
    );
  return new Map(rows.map((r) => [`${r.txHash}\n${r.nonce}`, r.skillId]));
}

/** What the chain showed each already-verified payment among the receipted records moved, by skill, transaction and nonce. */
async function chainAmounts(ctx: ServiceContext, accepted: readonly Accepted[]): Promise<Map<string, bigint>> {
  const named = accepted.filter((a) => a.receipt && a.paymentRef !== null);
  if (named.length === 0) return new Map();
  const rows = await ctx.db
    .select({
      skillId: paymentVerifications.skillId,
      txHash: paymentVerifications.txHash,
      nonce: paymentVerifications.nonce,
      amount: paymentVerifications.amount,
    })
    .from(paymentVerifications)
    .where(
      and(
        inArray(
          paymentVerifications.txHash,
          named.map((a) => a.paymentRef!.toLowerCase()),
        ),
        eq(paymentVerifications.status, 'verified'),
        isNotNull(paymentVerifications.amount),
      ),
    );
  return new Map(rows.map((r) => [`${r.skillId}\n${r.txHash}\n${r.nonce ?? ''}`, r.amount!]));
}
