import { Elysia, t } from 'elysia';
import type { ServiceContext } from '../../context';
import { authPlugin } from '../auth/plugin';
import { SkillView } from '../skills/model';
import { listGroupSkills } from '../skills/own';
import { CreateGroup, CreatorQuery, GroupView, SlugParam, UpdateGroup } from './model';
import { createGroup, deleteGroup, getGroupRow, listGroups, toGroupView, updateGroup } from './service';

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
      response: t.Array(GroupView),
      detail: { tags, summary: 'All groups, or one creator’s (by wallet address)' },
    })
    .get(
      '/groups/:slug',
      async ({ params, query }) => {
        const group = await getGroupRow(ctx, params.slug, query.creator);
        return { ...toGroupView(group), skills: await listGroupSkills(ctx, group.id) };
      },
      {
        params: SlugParam,
        query: CreatorQuery,
        response: t.Composite([GroupView, t.Object({ skills: t.Array(SkillView) })]),
        detail: { tags, summary: 'A group with its active skills' },
      },
    )
    .patch('/groups/:slug', ({ principal, params, body }) => updateGroup(ctx, principal.userId, params.slug, body), {
      auth: 'creator',
      params: SlugParam,
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
      { auth: 'creator', params: SlugParam, response: t.Object({ success: t.Literal(true) }), detail: { tags, summary: 'Delete your group (409 while a skill uses it)' } },
    );
}
