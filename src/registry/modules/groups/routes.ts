import { Elysia } from 'elysia';
import type { ServiceContext } from '../../context';
import { routeHooks } from '../../../http';
import { authPlugin } from '../auth';
import { getGroupDetail } from './detail';
import { REGISTRY_ROUTES } from 'skill-market/registry';
import { createGroup, deleteGroup, listGroups, updateGroup } from './service';

const { createGroup: create, groups, group, updateGroup: update, deleteGroup: remove } = REGISTRY_ROUTES;

/** Creators manage their own groups; listings are public. */
export function groupRoutes(ctx: ServiceContext) {
  return new Elysia({ name: 'group-routes' })
    .use(authPlugin(ctx))
    .route(
      create.method,
      create.path,
      async ({ principal, body, set }) => {
        set.status = 201;
        return createGroup(ctx, principal.userId, body);
      },
      routeHooks(create),
    )
    .route(groups.method, groups.path, ({ query }) => listGroups(ctx, query.creator), routeHooks(groups))
    .route(group.method, group.path, ({ params, query }) => getGroupDetail(ctx, params.slug, query.creator), routeHooks(group))
    .route(
      update.method,
      update.path,
      ({ principal, params, body }) => updateGroup(ctx, principal.userId, params.slug, body),
      routeHooks(update),
    )
    .route(
      remove.method,
      remove.path,
      async ({ principal, params }) => {
        await deleteGroup(ctx, principal.userId, params.slug);
        return { success: true as const };
      },
      routeHooks(remove),
    );
}
