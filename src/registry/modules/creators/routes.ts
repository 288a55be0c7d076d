import { Elysia } from 'elysia';
import { listPublicSkillsOf } from '../skills';
import type { ServiceContext } from '../../context';
import { authPlugin } from '../auth';
import { REGISTRY_ROUTES } from 'skill-market/registry';
import { getCreatorByAddress, getUserById, toCreator, updateProfile } from '../users';
import { AppError, routeHooks } from '../../../http';

const { me, updateProfile: update, creator } = REGISTRY_ROUTES;

/**
 * Public creator profiles, and the signed-in user's own profile. A module of routes alone, above auth
 * and users: auth signs users in through the users module, so that one has no routes on auth.
 */
export function creatorRoutes(ctx: ServiceContext) {
  return new Elysia({ name: 'creator-routes' })
    .use(authPlugin(ctx))
    .route(
      me.method,
      me.path,
      async ({ principal }) => {
        const user = await getUserById(ctx, principal.userId);
        if (!user) throw new AppError('NOT_FOUND', 'Creator not found');
        return toCreator(user);
      },
      routeHooks(me),
    )
    .route(update.method, update.path, ({ principal, body }) => updateProfile(ctx, principal.userId, body), routeHooks(update))
    .route(
      creator.method,
      creator.path,
      async ({ params }) => ({
        ...(await getCreatorByAddress(ctx, params.address)),
        skills: await listPublicSkillsOf(ctx, params.address),
      }),
      routeHooks(creator),
    );
}
