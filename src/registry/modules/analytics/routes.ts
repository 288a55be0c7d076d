import { Elysia } from 'elysia';
import type { ServiceContext } from '../../context';
import { clientIp } from '../../lib/client-ip';
import { announceNextPage } from '../../lib/paging';
import { authPlugin } from '../auth';
import { listFavorites, listUsage } from './history';
import { accessCookieName } from '../auth';
import { authenticate } from '../auth';
import { channelRefresher } from '../channel-revenue';
import { recordReportedPayment } from '../payment-verification';
import { REGISTRY_ROUTES as r } from 'skill-market/registry';
import { routeHooks } from '../../../http';
import { recordCall, recordCalls } from './calls';
import { dayRange, revenueCsv, revenueLedger } from './revenue';
import { UsageRequestBody } from './usage-request';
import { DEFAULT_DAYS, channelsOf, getAnalytics, recordUsage, recordView, setFavorite, skillPayments } from './service';

/**
 * Views are public and deduplicated per IP; calls only from the skill's creator (its skill
 * server's sk_ key); usage and favorites from any signed-in consumer, who alone reads their own
 * history and favourites; a skill's counters are public.
 */
export function analyticsRoutes(ctx: ServiceContext) {
  // A payer's channels are read on chain again when stale, where the registry checks payments at all.
  const refresh = ctx.config.payments.enabled
    ? channelRefresher({ db: ctx.db, config: ctx.config.payments, chain: ctx.config.chain, clock: ctx.clock, logger: ctx.logger })
    : undefined;
  return (
    new Elysia({ name: 'analytics-routes' })
      .use(authPlugin(ctx))
      .route(
        r.recordView.method,
        r.recordView.path,
        async ({ body, request, server }) => ({
          success: true as const,
          recorded: await recordView(ctx, body.skillId, clientIp(request, server, ctx.config.trustedProxies)),
        }),
        routeHooks(r.recordView),
      )
      .route(
        r.recordCall.method,
        r.recordCall.path,
        async ({ principal, body }) => ({ success: true as const, recorded: await recordCall(ctx, principal.userId, body) }),
        routeHooks(r.recordCall),
      )
      .route(
        r.recordCalls.method,
        r.recordCalls.path,
        async ({ principal, body }) => {
          const results = await recordCalls(ctx, principal.userId, body.calls);
          return { success: true as const, recorded: results.filter((r) => r.status === 'recorded').length, results };
        },
        routeHooks(r.recordCalls),
      )
      .route(
        r.recordUsage.method,
        r.recordUsage.path,
        async ({ body, headers, cookie }) => {
          // Another SDK's shape needs no credential: its transaction is verified on chain before it counts.
          if ('skillSlug' in body) return { success: true as const, recorded: await recordReportedPayment(ctx, body) };
          const principal = await authenticate(
            ctx,
            headers.authorization,
            cookie[accessCookieName(ctx.config.auth)]?.value as string | undefined,
            'consumer',
          );
          return { success: true as const, recorded: await recordUsage(ctx, principal.userId, body) };
        },
        // The contract's body with an error naming the field in the shape the client meant.
        routeHooks(r.recordUsage, { body: UsageRequestBody }),
      )
      .route(
        r.favorite.method,
        r.favorite.path,
        async ({ principal, body }) => ({
          success: true as const,
          ...(await setFavorite(ctx, principal.userId, body.skillId, body.action === 'add')),
        }),
        routeHooks(r.favorite),
      )
      // The caller's own lists come before `/:skillId`, which would otherwise read them as an id.
      .route(
        r.usage.method,
        r.usage.path,
        async ({ principal, query, set, request }) => {
          const { records, nextCursor } = await listUsage(ctx, principal.userId, query);
          announceNextPage(set.headers, request.url, nextCursor);
          return records;
        },
        routeHooks(r.usage),
      )
      .route(
        r.revenueCsv.method,
        r.revenueCsv.path,
        async ({ principal, query, set }) => {
          const rows = await revenueLedger(ctx, principal.userId, dayRange(query));
          set.headers['content-type'] = 'text/csv; charset=utf-8';
          set.headers['content-disposition'] = 'attachment; filename="revenue.csv"';
          return revenueCsv(rows, ctx.config.chain.usdcDecimals);
        },
        routeHooks(r.revenueCsv),
      )
      .route(
        r.channels.method,
        r.channels.path,
        ({ principal, query }) => channelsOf(ctx, principal, query.role ?? 'receiver', refresh),
        routeHooks(r.channels),
      )
      .route(r.favorites.method, r.favorites.path, ({ principal }) => listFavorites(ctx, principal.userId), routeHooks(r.favorites))
      .route(
        r.analytics.method,
        r.analytics.path,
        ({ params, query }) => getAnalytics(ctx, params.skillId, query.days ?? DEFAULT_DAYS),
        routeHooks(r.analytics),
      )
      .route(
        r.skillPayments.method,
        r.skillPayments.path,
        async ({ principal, params, query, set, request }) => {
          const { payments, nextCursor } = await skillPayments(ctx, principal.userId, params.skillId, query);
          announceNextPage(set.headers, request.url, nextCursor);
          return payments;
        },
        routeHooks(r.skillPayments),
      )
  );
}
