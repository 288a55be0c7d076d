/** Reviews by verified buyers, and the creator's one reply. */
import { type Static, Type as T } from '@sinclair/typebox';
import { Nullable, PageLimit, Timestamp, Uuid } from './common';

export const PostReview = T.Object({
  skillSlug: T.String({ minLength: 1, maxLength: 120 }),
  score: T.Integer({ minimum: 1, maximum: 5, description: '1 (worst) to 5 (best)' }),
  comment: T.Optional(Nullable(T.String({ maxLength: 2000 }))),
});
export type PostReview = Static<typeof PostReview>;

export const ReviewView = T.Object({
  id: Uuid(),
  skillId: Uuid(),
  consumerAddress: T.String(),
  score: T.Integer({ minimum: 1, maximum: 5 }),
  comment: Nullable(T.String()),
  reply: Nullable(T.String(), 'the creator’s answer (at most one)'),
  repliedAt: Nullable(Timestamp()),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});
export type ReviewView = Static<typeof ReviewView>;
export const ReviewList = T.Array(ReviewView);

export const ReviewsQuery = T.Object({
  limit: T.Optional(PageLimit('reviews per page, 1–100, default 20')),
  cursor: T.Optional(T.String({ maxLength: 200 })),
});
export type ReviewsQuery = Static<typeof ReviewsQuery>;

export const ReplyBody = T.Object({ comment: T.String({ minLength: 1, maxLength: 2000, pattern: '\\S' }) });
export const ReviewIdParam = T.Object({ id: Uuid() });
