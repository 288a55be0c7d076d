import { Elysia } from 'elysia';
import { REGISTRY_ROUTES } from 'skill-market/registry';
import { requestPathAndQuery } from 'skill-market/http';
import type { ServiceContext } from '../../context';
import { routeHooks } from '../../../http';
import { jsonAnswer, sendAnswer } from '../../cache/http';
import { paymentAssets } from './assets';
import { resourceBuilder } from './item';
import { creatorProfiles } from './profiles';
import { type DiscoveryDeps, listResources, loadEachTime, type Remember, searchResources } from './service';

const { discoveryResources: resources, discoverySearch: search } = REGISTRY_ROUTES;

/**
 * The x402 Bazaar discovery API (the `bazaar` extension's `GET /discovery/resources` and
 * `GET /discovery/search`): the catalogue as standard x402 tooling reads it, from the read cache
 * like `GET /skills`, with or without a credential.
 */
export function discoveryRoutes(ctx: ServiceContext, deps: DiscoveryDeps = defaultDeps(ctx)) {
  // The same for everyone (no caller sees more): always from the replica and the cache.
  const publicCtx: ServiceContext = ctx.readDb ? { ...ctx, db: ctx.readDb } : ctx;
  const maxAgeSeconds = Math.floor(ctx.config.readCacheMs / 1000);
  const cacheControl = maxAgeSeconds > 0 ? `public, max-age=${maxAgeSeconds}` : 'public, no-cache';
  const reads = ctx.reads;
  const remember: Remember = reads ? (key, load) => reads.remember(key, load) : loadEachTime;
  const answer = async (request: Request, build: () => Promise<unknown>) =>
    sendAnswer(
      request,
      await remember(`discovery ${requestPathAndQuery(request.url)}`, async () => jsonAnswer(await build())),
      cacheControl,
    );
  return new Elysia({ name: 'discovery-routes' })
    .route(
      resources.method,
      resources.path,
      ({ query, request }) => answer(request, () => listResources(publicCtx, deps, query, remember)),
      routeHooks(resources),
    )
    .route(
      search.method,
      search.path,
      ({ query, request }) => answer(request, () => searchResources(publicCtx, deps, query, remember)),
      routeHooks(search),
    );
}

function defaultDeps(ctx: ServiceContext): DiscoveryDeps {
  return { assets: paymentAssets(ctx.config.chain, ctx.logger), toResource: resourceBuilder(), profiles: creatorProfiles(ctx.clock) };
}
