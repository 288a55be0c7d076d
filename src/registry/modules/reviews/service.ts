import { and, desc, eq, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import { paymentVerifications, reviews, skills, users, wallets } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';
import { decodeCursor, encodeCursor, isIsoInstant } from '../../lib/cursor';
import type { PostReview, ReviewsQuery, ReviewView } from 'skill-market/registry';
import { countReview } from '../stats';
import { emitEvent } from '../webhook-events';
import { type ReviewScale, shownScore, starsOf, storedScore } from './scale';

type ReviewRow = typeof reviews.$inferSelect;

function toReviewView(row: ReviewRow, scale: ReviewScale): ReviewView {
  return {
    id: row.id,
    skillId: row.skillId,
    consumerAddress: row.consumerAddress,
    score: shownScore(row.score, scale),
    comment: row.comment,
    reply: row.reply,
    repliedAt: row.repliedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

async function skillBySlug(ctx: ServiceContext, slug: string) {
  const [skill] = await ctx.db.select({ id: skills.id, creatorId: skills.creatorId }).from(skills).where(eq(skills.slug, slug));
  if (!skill) throw new AppError('NOT_FOUND', 'Skill not found');
  return skill;
}

/**
 * Whether a payment to the skill from one of the account's wallets is verified on chain: its
 * sign-in wallet, or a spending wallet it proved it holds the key of (an address registered
 * without proof could be anyone's, so its payments are not this account's).
 */
async function isVerifiedBuyer(ctx: ServiceContext, userId: string, skillId: string): Promise<{ walletAddress: string } | undefined> {
  const [user] = await ctx.db.select({ walletAddress: users.walletAddress }).from(users).where(eq(users.id, userId));
  if (!user) return undefined;
  const spending = await ctx.db
    .select({ address: wallets.address })
    .from(wallets)
    .where(and(eq(wallets.userId, userId), isNotNull(wallets.provenAt)));
  const payers = [user.walletAddress, ...spending.map((w) => w.address)];
  const [paid] = await ctx.db
    .select({ id: paymentVerifications.id })
    .from(paymentVerifications)
    .where(
      and(
        eq(paymentVerifications.skillId, skillId),
        eq(paymentVerifications.status, 'verified'),
        inArray(paymentVerifications.payer, payers),
      ),
    )
    .limit(1);
  return paid ? user : undefined;
}

/**
 * Writes the caller's review of a skill they have paid for (verified on chain), or updates it:
 * `created` tells which. The skill's count and score sum change in the same transaction, so the
 * average stays exact under concurrent reviews.
 */
export async function postReview(
  ctx: ServiceContext,
  userId: string,
  input: PostReview,
  scale: ReviewScale,
): Promise<{ created: boolean; review: ReviewView }> {
  const score = storedScore(input.score, scale);
  const skill = await skillBySlug(ctx, input.skillSlug);
  const buyer = await isVerifiedBuyer(ctx, userId, skill.id);
  if (!buyer) throw new AppError('FORBIDDEN', 'Only buyers can review a skill: no verified payment to it from your wallets');
  const comment = input.comment?.trim() || null;
  const now = ctx.clock.now();
  const outcome = await ctx.db.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(reviews)
      .values({
        skillId: skill.id,
        userId,
        consumerAddress: buyer.walletAddress,
        score,
        comment,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning();
    if (inserted) {
      await countReview(tx, skill.id, score);
      await emitEvent(tx, {
        userId: skill.creatorId,
        type: 'review.created',
        at: now,
        data: { skill: input.skillSlug, reviewId: inserted.id, score: starsOf(inserted.score), comment, reviewer: buyer.walletAddress },
      });
      return { created: true, review: toReviewView(inserted, scale) };
    }
    const [previous] = await tx
      .select()
      .from(reviews)
      .where(and(eq(reviews.skillId, skill.id), eq(reviews.userId, userId)))
      .for('update');
    if (!previous) throw new Error('review vanished during an update');
    const [updated] = await tx.update(reviews).set({ score, comment, updatedAt: now }).where(eq(reviews.id, previous.id)).returning();
    await countReview(tx, skill.id, score, previous.score);
    return { created: false, review: toReviewView(updated!, scale) };
  });
  ctx.reads?.skillChanged(skill.id); // its rating
  return outcome;
}

/** A skill's reviews, newest first, one keyset page at a time. */
export async function listReviews(
  ctx: ServiceContext,
  slug: string,
  query: ReviewsQuery,
  scale: ReviewScale,
): Promise<{ reviews: ReviewView[]; nextCursor: string | undefined }> {
  const skill = await skillBySlug(ctx, slug);
  const limit = query.limit ?? 20;
  const after = query.cursor ? decodeCursor(query.cursor, isIsoInstant) : undefined;
  const rows = await ctx.db
    .select()
    .from(reviews)
    .where(
      and(
        eq(reviews.skillId, skill.id),
        after ? sql`(${reviews.createdAt}, ${reviews.id}) < (${after[0]}::timestamptz, ${after[1]}::uuid)` : undefined,
      ),
    )
    .orderBy(desc(reviews.createdAt), desc(reviews.id))
    .limit(limit + 1);
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return {
    reviews: shown.map((row) => toReviewView(row, scale)),
    nextCursor: rows.length > limit && last ? encodeCursor(last.createdAt.toISOString(), last.id) : undefined,
  };
}

/** The skill's creator answers a review, once. */
export async function replyToReview(
  ctx: ServiceContext,
  userId: string,
  reviewId: string,
  comment: string,
  scale: ReviewScale,
): Promise<ReviewView> {
  const [found] = await ctx.db
    .select({ review: reviews, creatorId: skills.creatorId })
    .from(reviews)
    .innerJoin(skills, eq(skills.id, reviews.skillId))
    .where(eq(reviews.id, reviewId));
  if (!found) throw new AppError('NOT_FOUND', 'Review not found');
  if (found.creatorId !== userId) throw new AppError('FORBIDDEN', 'Only the skill’s creator can reply to its reviews');
  const [replied] = await ctx.db
    .update(reviews)
    .set({ reply: comment.trim(), repliedAt: ctx.clock.now() })
    .where(and(eq(reviews.id, reviewId), isNull(reviews.reply)))
    .returning();
  if (!replied) throw new AppError('CONFLICT', 'This review already has a reply');
  return toReviewView(replied, scale);
}
