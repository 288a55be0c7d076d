import { and, eq, gte, lte } from 'drizzle-orm';
import { formatPrice, MAX_PRICE_UNITS, rescaleAtomic, USDC_DECIMALS } from 'skill-market/x402';
import { favorites, skillDaily, skillStats, usageRecords, viewDedup, wallets } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';
import { MAX_USAGE_AMOUNT, type SkillPaymentsQuery, type UsageBody } from 'skill-market/registry';
import { hashSecret } from '../auth';
import { tokenDecimals } from '../../../config/chain';
import { decodeCursor, isIsoInstant } from '../../lib/cursor';
import { countRejectedPayments, listSkillPayments, nominatePayment } from '../payment-verification';
import { DEFAULT_LIMIT } from '../skills';
import { type ChannelRefresher, type ChannelTotals, channelTotals, channelUsageOf, listChannels } from '../channel-revenue';
import { receiptRefusal } from './receipts';
import { type SkillFacts, skillById } from './skill-facts';
import { countReceiptMismatches, schemeSplit } from './splits';
import { type TierFigures, tierSplit } from './tiers';
import { countFavorite, countView, dayOf } from '../stats';

/** Counts a view once per client IP per skill within the configured window. */
export async function recordView(ctx: ServiceContext, skillId: string, ip: string): Promise<boolean> {
  await skillById(ctx, skillId);
  const now = ctx.clock.now();
  const windowStart = new Date(now.getTime() - ctx.config.catalogue.viewWindowSeconds * 1000);
  const visitor = hashSecret(`view:${ip}`).slice(0, 32);
  const counted = await ctx.db.transaction(async (tx) => {
    const counted = await tx
      .insert(viewDedup)
      .values({ skillId, visitor, countedAt: now })
      .onConflictDoUpdate({
        target: [viewDedup.skillId, viewDedup.visitor],
        set: { countedAt: now },
        setWhere: lte(viewDedup.countedAt, windowStart),
      })
      .returning({ skillId: viewDedup.skillId });
    if (counted.length === 0) return false;
    await countView(tx, skillId, now);
    return true;
  });
  if (counted) ctx.reads?.skillChanged(skillId);
  return counted;
}

/**
 * Usage reported by a consumer, kept for their history in the token's atomic units (the older
 * micro-USDC `amount` converted here, once); a repeated paymentRef is recorded once. It never
 * counts as revenue by itself: its payment does, once verified on chain. A call paid over a
 * payment channel names its channel and cumulative charge (recorded once per both): no transfer
 * is checked for it; its state is the skill server's record of the call and the chain's.
 */
export async function recordUsage(ctx: ServiceContext, userId: string, input: UsageBody): Promise<boolean> {
  const skill = await skillById(ctx, input.skillId);
  const decimals = tokenDecimals(ctx.config.chain, skill.network);
  const amount = usageAmount(input, decimals);
  const channel = channelUsageOf(input, amount);
  // The buyer's kept receipt: checked like a creator's call record, against the listing and the record.
  const refused = await receiptRefusal(input, skill, amount, decimals);
  if (refused) throw new AppError('VALIDATION', `Invalid request: field "receipt": ${refused}`, [{ field: 'receipt', message: refused }]);
  const receipt = input.receipt && skill.receiptSigner ? { receipt: input.receipt } : {};
  const now = ctx.clock.now();
  return ctx.db.transaction(async (tx) => {
    const paymentId = input.paymentRef ? (await nominatePayment(tx, ctx.config.chain, skill, input.paymentRef, now, amount)).id : null;
    const inserted = await tx
      .insert(usageRecords)
      .values({
        skillId: skill.id,
        userId,
        amount,
        paymentRef: input.paymentRef ?? null,
        paymentId,
        ...channel,
        ...receipt,
        createdAt: now,
      })
      .onConflictDoNothing()
      .returning({ id: usageRecords.id });
    return inserted.length > 0;
  });
}

/** The amount of a usage record in atomic units of a token of `decimals`; 400 when missing or out of range. */
function usageAmount(input: UsageBody, decimals: number): bigint {
  if (input.amountAtomic !== undefined) {
    const atomic = BigInt(input.amountAtomic);
    if (atomic < 1n || atomic > MAX_PRICE_UNITS * 10n ** BigInt(decimals))
      throw new AppError(
        'VALIDATION',
        `Invalid request: field "amountAtomic": must be 1 to ${MAX_PRICE_UNITS} whole tokens in atomic units`,
      );
    return atomic;
  }
  if (input.amount === undefined) throw new AppError('VALIDATION', 'Invalid request: field "amountAtomic" is required');
  const micro = BigInt(input.amount);
  if (micro < 1n || micro > BigInt(MAX_USAGE_AMOUNT)) {
    throw new AppError('VALIDATION', `Invalid request: field "amount": must be a positive integer of micro-USDC up to ${MAX_USAGE_AMOUNT}`);
  }
  const atomic = rescaleAtomic(micro, USDC_DECIMALS, decimals);
  if (atomic === undefined)
    throw new AppError('VALIDATION', `Invalid request: field "amount": ${micro} micro-USDC is not a whole number of the token's units`);
  return atomic;
}

/** Adds or removes the caller's favorite (idempotent); answers the count after the change. */
export async function setFavorite(
  ctx: ServiceContext,
  userId: string,
  skillId: string,
  add: boolean,
): Promise<{ favorited: boolean; favoriteCount: number }> {
  await skillById(ctx, skillId);
  const outcome = await ctx.db.transaction(async (tx) => {
    const changed = add
      ? await tx
          .insert(favorites)
          .values({ userId, skillId, createdAt: ctx.clock.now() })
          .onConflictDoNothing()
          .returning({ skillId: favorites.skillId })
      : await tx
          .delete(favorites)
          .where(and(eq(favorites.userId, userId), eq(favorites.skillId, skillId)))
          .returning({ skillId: favorites.skillId });
    const delta = changed.length === 0 ? 0 : add ? 1 : -1;
    return { favorited: add, favoriteCount: await countFavorite(tx, skillId, delta), changed: delta !== 0 };
  });
  if (outcome.changed) ctx.reads?.skillChanged(skillId);
  return { favorited: outcome.favorited, favoriteCount: outcome.favoriteCount };
}

/** Days in the daily series when the caller does not say. */
export const DEFAULT_DAYS = 30;

/** Counters plus a daily series of the last `length` UTC days (oldest first, empty days included). */
export async function getAnalytics(ctx: ServiceContext, skillId: string, length = DEFAULT_DAYS) {
  const skill = await skillById(ctx, skillId);
  const decimals = tokenDecimals(ctx.config.chain, skill.network);
  const [stats] = await ctx.db.select().from(skillStats).where(eq(skillStats.skillId, skillId));
  const today = ctx.clock.now();
  const days = Array.from({ length }, (_, i) => dayOf(new Date(today.getTime() - (length - 1 - i) * 86_400_000)));
  const rows = await ctx.db
    .select()
    .from(skillDaily)
    .where(and(eq(skillDaily.skillId, skillId), gte(skillDaily.day, days[0]!)));
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const revenue = BigInt(stats?.totalRevenue ?? 0);
  const channels = await channelTotals(ctx.db, skillId);
  const schemes = await schemeSplit(ctx.db, skillId, channels);
  const atomic = (f: { calls: number; revenueAtomic: bigint }) => ({ calls: f.calls, revenueAtomic: f.revenueAtomic.toString() });
  return {
    skillId,
    callCount: stats?.callCount ?? 0,
    paidCallCount: stats?.paidCallCount ?? 0,
    trialCallCount: stats?.trialCallCount ?? 0,
    viewCount: stats?.viewCount ?? 0,
    favoriteCount: stats?.favoriteCount ?? 0,
    totalRevenue: formatPrice(revenue, decimals),
    totalRevenueAtomic: revenue.toString(),
    lastCalledAt: stats?.lastCalledAt?.toISOString() ?? null,
    lastViewedAt: stats?.lastViewedAt?.toISOString() ?? null,
    rejectedPaymentCount: await countRejectedPayments(ctx.db, skillId),
    channels: channelRevenueView(channels),
    schemes: { exact: atomic(schemes.exact), upto: atomic(schemes.upto), batchSettlement: atomic(schemes.batchSettlement) },
    tiers: skill.tiers ? tierView(skill.priceAtomic, skill.tiers, await tierSplit(ctx.db, skillId), decimals) : null,
    receiptMismatchCount: await countReceiptMismatches(ctx.db, skillId),
    daily: days.map((date) => {
      const r = byDay.get(date);
      const revenue = BigInt(r?.revenue ?? 0);
      return {
        date,
        views: r?.views ?? 0,
        calls: r?.calls ?? 0,
        revenue: formatPrice(revenue, decimals),
        revenueAtomic: revenue.toString(),
      };
    }),
  };
}

/** A skill's reported payments and their checks, for its creator only (403 for anyone else). */
export async function skillPayments(ctx: ServiceContext, userId: string, skillId: string, query: SkillPaymentsQuery) {
  // A malformed cursor is refused (400) before asking whose skill it is, as on every paged list.
  const after = query.cursor ? decodeCursor(query.cursor, isIsoInstant) : undefined;
  const skill = await skillById(ctx, skillId);
  if (skill.creatorId !== userId) throw new AppError('FORBIDDEN', 'Only the skill’s creator can read its payments');
  return listSkillPayments(
    ctx.db,
    ctx.config.chain,
    skill.id,
    { state: query.state, receipt: query.receipt, after },
    query.limit ?? DEFAULT_LIMIT,
  );
}

/**
 * The tiers of a skill with volume prices: the base and each listed step (with their prices now,
 * zero calls included), then steps no longer listed that priced calls, then the unknown tier.
 */
function tierView(price: bigint, tiers: NonNullable<SkillFacts['tiers']>, split: readonly TierFigures[], decimals: number) {
  const inToken = (micro: bigint) => rescaleAtomic(micro, USDC_DECIMALS, decimals)?.toString() ?? null;
  const listed = [
    { after: 0, priceAtomic: inToken(price) },
    ...tiers.steps.map((s) => ({ after: s.after, priceAtomic: inToken(BigInt(s.priceAtomic)) })),
  ];
  const figures = new Map(split.map((f) => [f.after, f]));
  const row = (after: number | null, priceAtomic: string | null) => {
    const f = figures.get(after);
    figures.delete(after);
    return { after, priceAtomic, calls: f?.calls ?? 0, revenueAtomic: (f?.revenueAtomic ?? 0n).toString() };
  };
  const rows = listed.map((t) => row(t.after, t.priceAtomic));
  const unknown = figures.get(null);
  figures.delete(null);
  for (const f of figures.values()) rows.push(row(f.after, null));
  rows.sort((a, b) => (a.after ?? 0) - (b.after ?? 0));
  if (unknown) rows.push(row(null, null));
  return rows;
}

function channelRevenueView(t: ChannelTotals) {
  return {
    earnedCalls: t.earnedCalls,
    earnedAtomic: t.earnedAtomic.toString(),
    claimedCalls: t.claimedCalls,
    claimedAtomic: t.claimedAtomic.toString(),
    settledAtomic: t.settledAtomic.toString(),
    refusedCalls: t.refusedCalls,
  };
}

/** Most channels `GET /analytics/channels` answers. */
const CHANNEL_LIST_LIMIT = 100;
/** A payer's channel last read longer ago than this is read again before their list is answered. */
const PAYER_FRESH_SECONDS = 10;
/** Most channels read again for one answer (the newest). */
const PAYER_REFRESH_LIMIT = 20;

/**
 * The caller's payment channels: as `receiver`, those of their skills; as `payer`, those paid from
 * their sign-in wallet or one of their spending wallets (and those their usage records name that
 * the registry has not read on chain yet), each read on chain again first when its last read is
 * older than a few seconds (with `refresh`: when the registry checks payments).
 */
export async function channelsOf(
  ctx: ServiceContext,
  principal: { userId: string; walletAddress: string },
  role: 'receiver' | 'payer',
  refresh?: ChannelRefresher,
) {
  if (role === 'receiver') return listChannels(ctx.db, { creatorId: principal.userId }, CHANNEL_LIST_LIMIT);
  const own = await ctx.db.select({ address: wallets.address }).from(wallets).where(eq(wallets.userId, principal.userId));
  const payers = { payers: [principal.walletAddress, ...own.map((w) => w.address)], userId: principal.userId };
  const listed = await listChannels(ctx.db, payers, CHANNEL_LIST_LIMIT);
  const staleBefore = ctx.clock.now().getTime() - PAYER_FRESH_SECONDS * 1000;
  const stale = listed.filter((c) => c.checkedAt === null || Date.parse(c.checkedAt) <= staleBefore).slice(0, PAYER_REFRESH_LIMIT);
  if (!refresh || stale.length === 0) return listed;
  await refresh(
    stale.map((c) => c.channelId),
    PAYER_FRESH_SECONDS,
  );
  return listChannels(ctx.db, payers, CHANNEL_LIST_LIMIT);
}
