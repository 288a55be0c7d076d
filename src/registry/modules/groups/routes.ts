import { Elysia } from 'elysia';
import type { ServiceContext } from '../../context';
import { authPlugin } from '../auth';
import { getGroupDetail } from './detail';
import { CreateGroup, CreatorQuery, GroupDetail, GroupList, GroupSlugParam, GroupView, Success, UpdateGroup } from 'skill-market/registry';
import { createGroup, deleteGroup, listGroups, updateGroup } from './service';

const tags = ['Groups'];

/** Creators manage their own groups; listings are public. */
export function groupRoutes(ctx: ServiceContext) {
  return new Elysia({ name: 'group-routes' })
    .use(authPlugin(ctx))
    .post(
      '/groups',
      async ({ principal, body, set }) => {
        set.status = 201;
        return createGroup(ctx, principal.userId, body);
      },
      { auth: 'creator', body: CreateGroup, response: { 201: GroupView }, detail: { tags, summary: 'Create a group' } },
    )
    .get('/groups', ({ query }) => listGroups(ctx, query.creator), {
      query: CreatorQuery,
      response: GroupList,
      detail: { tags, summary: 'All groups, or one creator’s (by wallet address)' },
    })
    .get('/groups/:slug', ({ params, query }) => getGroupDetail(ctx, params.slug, query.creator), {
      params: GroupSlugParam,
      query: CreatorQuery,
      response: GroupDetail,
      detail: { tags, summary: 'A group with its creator and its active skills' },
    })
    .patch('/groups/:slug', ({ principal, params, body }) => updateGroup(ctx, principal.userId, params.slug, body), {
      auth: 'creator',
      params: GroupSlugParam,
      body: UpdateGroup,
      response: GroupView,
      detail: { tags, summary: 'Rename your group, or change its description or icon' },
    })
    .delete(
      '/groups/:slug',
      async ({ principal, params }) => {
        await deleteGroup(ctx, principal.userId, params.slug);
        return { success: true as const };
      },
      {
        auth: 'creator',
        params: GroupSlugParam,
        response: Success,
        detail: { tags, summary: 'Delete your group (409 while a skill uses it)' },
      },
    );
}
