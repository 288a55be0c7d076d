import { Elysia } from 'elysia';
import type { ServiceContext } from '../../context';
import { announceNextPage } from '../../lib/paging';
import { authPlugin } from '../auth';
import { PostReview, ReplyBody, ReviewIdParam, ReviewList, ReviewsQuery, ReviewView, SlugParam } from 'skill-market/registry';
import { reviewScaleOf } from './scale';
import { listReviews, postReview, replyToReview } from './service';

const tags = ['Reviews'];

/** Reviews by verified buyers (wire-compatible with the other SDK), and the creator's one reply. */
export function reviewRoutes(ctx: ServiceContext) {
  return new Elysia({ name: 'review-routes' })
    .use(authPlugin(ctx))
    .post(
      '/reviews',
      async ({ principal, body, set, headers }) => {
        const { created, review } = await postReview(ctx, principal.userId, body, reviewScaleOf(headers.accept));
        set.status = created ? 201 : 200;
        return review;
      },
      {
        auth: 'consumer',
        body: PostReview,
        response: { 200: ReviewView, 201: ReviewView },
        detail: {
          tags,
          summary: 'Review a skill you paid for (verified on chain): 201 new, 200 your review updated; 403 without a payment',
        },
      },
    )
    .get(
      '/skills/:slug/reviews',
      async ({ params, query, set, request }) => {
        const { reviews, nextCursor } = await listReviews(ctx, params.slug, query, reviewScaleOf(request.headers.get('accept')));
        announceNextPage(set.headers, request.url, nextCursor);
        return reviews;
      },
      {
        params: SlugParam,
        query: ReviewsQuery,
        response: ReviewList,
        detail: { tags, summary: 'A skill’s reviews, newest first; the next page’s cursor is in X-Next-Cursor' },
      },
    )
    .post(
      '/reviews/:id/reply',
      ({ principal, params, body, headers }) =>
        replyToReview(ctx, principal.userId, params.id, body.comment, reviewScaleOf(headers.accept)),
      {
        auth: 'creator',
        params: ReviewIdParam,
        body: ReplyBody,
        response: ReviewView,
        detail: { tags, summary: 'Answer a review of your skill, once (409 the second time)' },
      },
    );
}
