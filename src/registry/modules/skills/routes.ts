import { Elysia } from 'elysia';
import type { ServiceContext } from '../../context';
import { authPlugin } from '../auth';
import { RegisterSkill, SearchQuery, SkillList, SkillView, SlugParam, UpdateSkill } from 'skill-market/registry';
import { searchSkills } from './search';
import { getSkillBySlug, registerSkill, updateSkill } from './service';
import { listOwnSkills } from './own';
import { announceNextPage } from '../../lib/paging';

const tags = ['Skills'];

/** Registration (upsert), update, discovery and detail of skills. */
export function skillRoutes(ctx: ServiceContext) {
  return new Elysia({ name: 'skill-routes' })
    .use(authPlugin(ctx))
    .post(
      '/skills',
      async ({ principal, body, set }) => {
        const { created, skill } = await registerSkill(ctx, principal.userId, body);
        set.status = created ? 201 : 200;
        return skill;
      },
      {
        auth: 'creator',
        body: RegisterSkill,
        response: { 200: SkillView, 201: SkillView },
        detail: { tags, summary: 'Register a skill, or update yours of the same name (201 created, 200 updated)' },
      },
    )
    .get(
      '/skills',
      async ({ query, set, request }) => {
        const { skills, nextCursor } = await searchSkills(ctx, query);
        announceNextPage(set.headers, request.url, nextCursor);
        return skills;
      },
      {
        query: SearchQuery,
        response: SkillList,
        detail: { tags, summary: 'Search active skills; the next page’s cursor is in the X-Next-Cursor header' },
      },
    )
    .get('/skills/:slug', ({ params }) => getSkillBySlug(ctx, params.slug), {
      params: SlugParam,
      response: SkillView,
      detail: { tags, summary: 'One skill with its groups and analytics counters (inactive ones too)' },
    })
    .patch('/skills/:slug', ({ principal, params, body }) => updateSkill(ctx, principal.userId, params.slug, body), {
      auth: 'creator',
      params: SlugParam,
      body: UpdateSkill,
      response: SkillView,
      detail: { tags, summary: 'Update your skill; groups replace the whole set' },
    })
    .get('/creators/me/skills', ({ principal }) => listOwnSkills(ctx, principal.userId), {
      auth: 'creator',
      response: SkillList,
      detail: { tags: ['Creators'], summary: 'All your skills, inactive ones included, with their analytics' },
    });
}
