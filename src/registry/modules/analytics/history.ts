import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import { formatPrice } from 'skill-market/x402';
import { favorites, skills, usageRecords } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { decodeCursor, encodeCursor, isIsoInstant } from '../../lib/cursor';
import { channelViewsOf } from '../channel-revenue';
import { paymentAmount, paymentReason, paymentScheme, paymentStatus } from '../payment-verification';
import { receiptCheckOf } from './receipts';
import type { SkillView, UsageQuery, UsageRecordView } from 'skill-market/registry';
import { DEFAULT_LIMIT, notModerated, selectSkills, toSkillView } from '../skills';
import { tokenDecimals } from '../../../config/chain';

/**
 * The caller's own paid calls, newest first, one page at a time: a keyset cursor over
 * (createdAt, id) like skill search, so pages neither repeat nor skip records added meanwhile.
 * A call paid over a payment channel shows as one, with its state (channel-revenue), never as a
 * transfer check. A kept receipt of a transfer says whether it names what the chain shows paid.
 */
export async function listUsage(
  ctx: ServiceContext,
  userId: string,
  query: UsageQuery,
): Promise<{ records: UsageRecordView[]; nextCursor: string | undefined }> {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const filters: SQL[] = [eq(usageRecords.userId, userId)];
  if (query.cursor) {
    const [createdAt, id] = decodeCursor(query.cursor, isIsoInstant);
    filters.push(sql`(${usageRecords.createdAt}, ${usageRecords.id}) < (${createdAt}::timestamptz, ${id}::uuid)`);
  }
  const rows = await ctx.db
    .select({
      id: usageRecords.id,
      skillId: usageRecords.skillId,
      skillSlug: skills.slug,
      skillName: skills.name,
      amount: usageRecords.amount,
      paymentRef: usageRecords.paymentRef,
      channelId: usageRecords.channelId,
      cumulative: usageRecords.cumulative,
      depositTransaction: usageRecords.depositTransaction,
      depositAmount: usageRecords.depositAmount,
      receipt: usageRecords.receipt,
      network: skills.network,
      verification: paymentStatus(usageRecords.paymentId),
      verificationReason: paymentReason(usageRecords.paymentId),
      paidBy: paymentScheme(usageRecords.paymentId),
      chainAmount: paymentAmount(usageRecords.paymentId),
      createdAt: usageRecords.createdAt,
    })
    .from(usageRecords)
    .innerJoin(skills, eq(skills.id, usageRecords.skillId))
    .where(and(...filters))
    .orderBy(desc(usageRecords.createdAt), desc(usageRecords.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const channels = await channelViewsOf(ctx.db, page);
  return {
    records: page.map(
      ({ channelId, cumulative, depositTransaction, depositAmount, paidBy, receipt, chainAmount, ...r }, i): UsageRecordView => {
        const amount = BigInt(r.amount);
        const channel = channels[i] ?? null;
        const kept = receipt as UsageRecordView['receipt'] | null;
        return {
          ...r,
          amount: formatPrice(amount, tokenDecimals(ctx.config.chain, r.network)),
          amountAtomic: amount.toString(),
          // A channel call is no transfer: nothing of it is checked as one.
          verification: channel ? 'none' : r.verification,
          verificationReason: channel ? null : r.verificationReason,
          // A transfer is `exact` until its check shows an `upto` settlement.
          scheme: channel ? 'batch-settlement' : (paidBy ?? 'exact'),
          channel,
          // The signed receipt the buyer kept, when there is one, and how it stands against the chain (a transfer's).
          ...(kept
            ? { receipt: kept, receiptCheck: channel ? null : receiptCheckOf(kept.payload.amount, r.verification, chainAmount) }
            : {}),
          createdAt: r.createdAt.toISOString(),
        };
      },
    ),
    nextCursor: rows.length > limit && last ? encodeCursor(last.createdAt.toISOString(), last.id) : undefined,
  };
}

/**
 * The caller's favourite skills, most recently favourited first; inactive ones too (`isActive` says
 * so), but not those the operators hide (they come back, still favourites, once listed again).
 */
export async function listFavorites(ctx: ServiceContext, userId: string): Promise<SkillView[]> {
  const rows = await selectSkills(ctx.db)
    .innerJoin(favorites, and(eq(favorites.skillId, skills.id), eq(favorites.userId, userId)))
    .where(notModerated)
    .orderBy(desc(favorites.createdAt), desc(skills.id));
  return rows.map((r) => toSkillView(r, ctx.config.chain));
}
