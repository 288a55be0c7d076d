import { Elysia } from 'elysia';
import type { ServiceContext } from '../../context';
import { authPlugin } from '../auth';
import { REGISTRY_ROUTES } from 'skill-market/registry';
import { routeHooks } from '../../../http';
import { searchSkills } from './search';
import { getSkillBySlug, registerSkill, updateSkill } from './service';
import { listOwnSkills } from './own';
import { announceNextPage } from '../../lib/paging';
import { accessCookieName, authenticate, credentialCookie } from '../auth';
import { hasCredential, jsonAnswer, sendAnswer } from '../../cache/http';
import { requestPathAndQuery } from 'skill-market/http';

const { registerSkill: register, search, skill, updateSkill: update, ownSkills } = REGISTRY_ROUTES;

/** Registration (upsert), update, discovery and detail of skills. */
export function skillRoutes(ctx: ServiceContext) {
  const cookieName = accessCookieName(ctx.config.auth);
  // Anonymous discovery reads may go to a replica and to the cache; a request with a credential
  // reads the primary past the cache, so a creator sees their own writes at once.
  const publicCtx: ServiceContext = ctx.readDb ? { ...ctx, db: ctx.readDb } : ctx;
  const maxAgeSeconds = Math.floor(ctx.config.readCacheMs / 1000);
  const publicControl = maxAgeSeconds > 0 ? `public, max-age=${maxAgeSeconds}` : 'public, no-cache';
  const privateControl = 'private, no-cache';
  return new Elysia({ name: 'skill-routes' })
    .use(authPlugin(ctx))
    .route(
      register.method,
      register.path,
      async ({ principal, body, set }) => {
        const { created, skill } = await registerSkill(ctx, principal.userId, body);
        set.status = created ? 201 : 200;
        return skill;
      },
      routeHooks(register),
    )
    .route(
      search.method,
      search.path,
      async ({ query, request }) => {
        const credentialed = hasCredential(request, cookieName);
        const load = async () => {
          const { skills, nextCursor } = await searchSkills(credentialed ? ctx : publicCtx, query);
          const headers: Record<string, string> = {};
          announceNextPage(headers, request.url, nextCursor);
          return { skills, headers };
        };
        const byCounters = query.sort === 'popular' || query.sort === 'revenue' || query.sort === 'rating';
        const answer =
          credentialed || !ctx.reads
            ? await load().then(({ skills, headers }) => jsonAnswer(skills, headers))
            : await ctx.reads.search(requestPathAndQuery(request.url), byCounters, load);
        return sendAnswer(request, answer, credentialed ? privateControl : publicControl);
      },
      routeHooks(search),
    )
    .route(
      skill.method,
      skill.path,
      async ({ params, request, cookie }) => {
        const credentialed = hasCredential(request, cookieName);
        // A hidden listing shows to its creator and the operators: who asks is resolved only then.
        const viewer = async () => {
          try {
            return await authenticate(
              ctx,
              request.headers.get('authorization') ?? undefined,
              credentialCookie(cookie, cookieName),
              'consumer',
            );
          } catch {
            return undefined; // a bad credential reads what the public reads
          }
        };
        const load = () => (credentialed ? getSkillBySlug(ctx, params.slug, viewer) : getSkillBySlug(publicCtx, params.slug));
        const answer = credentialed || !ctx.reads ? jsonAnswer(await load()) : await ctx.reads.listing(params.slug, load);
        return sendAnswer(request, answer, credentialed ? privateControl : publicControl);
      },
      routeHooks(skill),
    )
    .route(
      update.method,
      update.path,
      ({ principal, params, body }) => updateSkill(ctx, principal.userId, params.slug, body),
      routeHooks(update),
    )
    .route(ownSkills.method, ownSkills.path, ({ principal }) => listOwnSkills(ctx, principal.userId), routeHooks(ownSkills));
}
