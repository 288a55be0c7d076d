import { Elysia } from 'elysia';
import { DiscoveryResourcesAnswer, DiscoveryResourcesQuery, DiscoverySearchAnswer, DiscoverySearchQuery } from 'skill-market/registry';
import { requestPathAndQuery } from 'skill-market/http';
import type { ServiceContext } from '../../context';
import { hasCredential, jsonAnswer, sendAnswer } from '../../cache/http';
import { accessCookieName } from '../auth';
import { paymentAssets } from './assets';
import { resourceBuilder } from './item';
import { listResources, searchResources, type DiscoveryDeps } from './service';

const tags = ['Discovery'];

/**
 * The x402 Bazaar discovery API (the `bazaar` extension's `GET /discovery/resources` and
 * `GET /discovery/search`): the catalogue as standard x402 tooling reads it, from the read cache
 * like `GET /skills`.
 */
export function discoveryRoutes(ctx: ServiceContext, deps: DiscoveryDeps = defaultDeps(ctx)) {
  const cookieName = accessCookieName(ctx.config.auth);
  const publicCtx: ServiceContext = ctx.readDb ? { ...ctx, db: ctx.readDb } : ctx;
  const maxAgeSeconds = Math.floor(ctx.config.readCacheMs / 1000);
  const publicControl = maxAgeSeconds > 0 ? `public, max-age=${maxAgeSeconds}` : 'public, no-cache';
  /** As `GET /skills`: anonymous reads from the replica and the cache; a credential reads the primary. */
  const answer = async (request: Request, build: (ctx: ServiceContext) => Promise<unknown>) => {
    const credentialed = hasCredential(request, cookieName);
    const load = async () => jsonAnswer(await build(credentialed ? ctx : publicCtx));
    const found = credentialed || !ctx.reads ? await load() : await ctx.reads.answer(requestPathAndQuery(request.url), load);
    return sendAnswer(request, found, credentialed ? 'private, no-cache' : publicControl);
  };
  return new Elysia({ name: 'discovery-routes' })
    .get('/discovery/resources', ({ query, request }) => answer(request, (c) => listResources(c, deps, query)), {
      query: DiscoveryResourcesQuery,
      response: DiscoveryResourcesAnswer,
      detail: {
        tags,
        summary: 'x402 Bazaar: the skills on offer as x402 resources with their payment terms, oldest first, by limit and offset',
      },
    })
    .get('/discovery/search', ({ query, request }) => answer(request, (c) => searchResources(c, deps, query)), {
      query: DiscoverySearchQuery,
      response: DiscoverySearchAnswer,
      detail: { tags, summary: 'x402 Bazaar: search the skills on offer (ranked, typo-tolerant); the next page by pagination.cursor' },
    });
}

function defaultDeps(ctx: ServiceContext): DiscoveryDeps {
  return { assets: paymentAssets(ctx.config.chain, ctx.logger), toResource: resourceBuilder() };
}
