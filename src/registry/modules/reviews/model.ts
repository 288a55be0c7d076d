import { t, type Static } from 'elysia';

export const PostReview = t.Object({
  skillSlug: t.String({ minLength: 1, maxLength: 120 }),
  score: t.Integer({ minimum: 1, maximum: 5, description: '1 (worst) to 5 (best)' }),
  comment: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()])),
});
export type PostReview = Static<typeof PostReview>;

export const ReviewView = t.Object({
  id: t.String({ format: 'uuid' }),
  skillId: t.String({ format: 'uuid' }),
  consumerAddress: t.String(),
  score: t.Integer({ minimum: 1, maximum: 5 }),
  comment: t.Union([t.String(), t.Null()]),
  reply: t.Union([t.String(), t.Null()], { description: 'the creator’s answer (at most one)' }),
  repliedAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
});
export type ReviewView = Static<typeof ReviewView>;

export const ReviewsQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100 })),
  cursor: t.Optional(t.String({ maxLength: 200 })),
});
export type ReviewsQuery = Static<typeof ReviewsQuery>;

export const ReplyBody = t.Object({ comment: t.String({ minLength: 1, maxLength: 2000, pattern: '\\S' }) });
export const ReviewIdParam = t.Object({ id: t.String({ format: 'uuid' }) });
export const SlugParam = t.Object({ slug: t.String({ minLength: 1, maxLength: 120 }) });
