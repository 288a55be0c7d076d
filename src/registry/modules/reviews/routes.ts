import { Elysia } from 'elysia';
import type { ServiceContext } from '../../context';
import { routeHooks } from '../../../http';
import { announceNextPage } from '../../lib/paging';
import { authPlugin } from '../auth';
import { REGISTRY_ROUTES } from 'skill-market/registry';
import { reviewScaleOf } from './scale';
import { listReviews, postReview, replyToReview } from './service';

const { postReview: post, reviews, replyToReview: reply } = REGISTRY_ROUTES;

/** Reviews by verified buyers (wire-compatible with the other SDK), and the creator's one reply. */
export function reviewRoutes(ctx: ServiceContext) {
  return new Elysia({ name: 'review-routes' })
    .use(authPlugin(ctx))
    .route(
      post.method,
      post.path,
      async ({ principal, body, set, headers }) => {
        const { created, review } = await postReview(ctx, principal.userId, body, reviewScaleOf(headers.accept));
        set.status = created ? 201 : 200;
        return review;
      },
      routeHooks(post),
    )
    .route(
      reviews.method,
      reviews.path,
      async ({ params, query, set, request }) => {
        const { reviews, nextCursor } = await listReviews(ctx, params.slug, query, reviewScaleOf(request.headers.get('accept')));
        announceNextPage(set.headers, request.url, nextCursor);
        return reviews;
      },
      routeHooks(reviews),
    )
    .route(
      reply.method,
      reply.path,
      ({ principal, params, body, headers }) =>
        replyToReview(ctx, principal.userId, params.id, body.comment, reviewScaleOf(headers.accept)),
      routeHooks(reply),
    );
}
