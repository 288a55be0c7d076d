/** Reviews by verified buyers, and the creator's one reply. */
import { type Static, Type as T } from '@sinclair/typebox';
import { Nullable, PageLimit, Timestamp, Uuid } from './common';

/**
 * `POST /reviews` body (consumer credentials): the caller's review of the skill `skillSlug`, a
 * whole `score` and an optional `comment` (at most 2000 characters, null for none). The score is
 * in stars, 1 to 5, when the request's Accept header names `application/json` (as this SDK sends
 * it); without that (the other SDK's plain fetch) it is a whole number from 0 to 100. One scale is
 * stored, 0–100: a star is 20 points, and a score reads back as the nearest whole star (85 → 4).
 * Reads answer in the dialect of the request the same way (0–100 reads back as sent).
 * Only a verified buyer may review: a payment to the skill from one of the caller's wallets must be
 * verified on chain, else 403. One review per buyer and skill: answered 201 with the new
 * {@link ReviewView}, or 200 when it replaced the caller's earlier one.
 */
export const PostReview = T.Object({
  skillSlug: T.String({ minLength: 1, maxLength: 120 }),
  score: T.Integer({
    minimum: 0,
    maximum: 100,
    description: 'stars 1 (worst) to 5 (best) with Accept: application/json; else 0 to 100',
  }),
  comment: T.Optional(Nullable(T.String({ maxLength: 2000 }))),
});
/** The {@link PostReview} schema's type. */
export type PostReview = Static<typeof PostReview>;

/**
 * A review as the registry answers it: `POST /reviews`, `POST /reviews/:id/reply` and the items of
 * `GET /skills/:slug/reviews`. `consumerAddress` is the reviewer's wallet; `score` is 1–5 stars
 * for a request that accepts `application/json` (this SDK), else 0–100 (see {@link PostReview});
 * `comment` is null when none was given; `reply` and `repliedAt` are null until the skill's
 * creator answers.
 */
export const ReviewView = T.Object({
  id: Uuid(),
  skillId: Uuid(),
  consumerAddress: T.String(),
  score: T.Integer({ minimum: 0, maximum: 100, description: 'stars 1–5 for a request accepting application/json; else 0–100' }),
  comment: Nullable(T.String()),
  reply: Nullable(T.String(), 'the creator’s answer (at most one)'),
  repliedAt: Nullable(Timestamp()),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});
/** The {@link ReviewView} schema's type. */
export type ReviewView = Static<typeof ReviewView>;
/**
 * Answer of `GET /skills/:slug/reviews` (public): one page of {@link ReviewView}, newest first; the
 * next page's cursor is in the `X-Next-Cursor` header.
 */
export const ReviewList = T.Array(ReviewView);

/**
 * Query of `GET /skills/:slug/reviews`: `limit` 1–100 (default 20), and `cursor`, the
 * `X-Next-Cursor` header of the previous page.
 */
export const ReviewsQuery = T.Object({
  limit: T.Optional(PageLimit('reviews per page, 1–100, default 20')),
  cursor: T.Optional(T.String({ maxLength: 200 })),
});
/** The {@link ReviewsQuery} schema's type. */
export type ReviewsQuery = Static<typeof ReviewsQuery>;

/**
 * `POST /reviews/:id/reply` body (creator credentials, the reviewed skill's creator only): the
 * answer, 1–2000 characters, not blank. A review takes one reply: a second gives 409. Answered
 * with the {@link ReviewView}.
 */
export const ReplyBody = T.Object({ comment: T.String({ minLength: 1, maxLength: 2000, pattern: '\\S' }) });
/** Path parameters of `POST /reviews/:id/reply`: the review's `id` (a UUID). */
export const ReviewIdParam = T.Object({ id: Uuid() });
