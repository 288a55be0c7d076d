import { Elysia, t } from 'elysia';
import type { ServiceContext } from '../../context';
import { clientIp } from '../../lib/client-ip';
import { announceNextPage } from '../../lib/paging';
import { authPlugin } from '../auth';
import { listFavorites, listUsage } from './history';
import { accessCookieName } from '../auth';
import { authenticate } from '../auth';
import { recordReportedPayment } from '../payment-verification';
import {
  Analytics,
  AnalyticsQuery,
  CallBody,
  CallsBody,
  CallsResult,
  ChannelList,
  ChannelsQuery,
  FavoriteBody,
  FavoriteResult,
  Recorded,
  SkillIdParam,
  SkillList,
  SkillPaymentList,
  RevenueQuery,
  SkillPaymentsQuery,
  UsageQuery,
  UsageRecordList,
  ViewBody,
} from 'skill-market/registry';
import { recordCall, recordCalls } from './calls';
import { revenueCsv, revenueLedger } from './revenue';
import { UsageRequestBody } from './usage-request';
import { DEFAULT_DAYS, channelsOf, getAnalytics, recordUsage, recordView, setFavorite, skillPayments } from './service';

const tags = ['Analytics'];

/**
 * Views are public and deduplicated per IP; calls only from the skill's creator (its skill
 * server's sk_ key); usage and favorites from any signed-in consumer, who alone reads their own
 * history and favourites; a skill's counters are public.
 */
export function analyticsRoutes(ctx: ServiceContext) {
  return (
    new Elysia({ name: 'analytics-routes', prefix: '/analytics' })
      .use(authPlugin(ctx))
      .post(
        '/view',
        async ({ body, request, server }) => ({
          success: true as const,
          recorded: await recordView(ctx, body.skillId, clientIp(request, server, ctx.config.trustedProxies)),
        }),
        { body: ViewBody, response: Recorded, detail: { tags, summary: 'Record a page view (once per IP per skill within the window)' } },
      )
      .post('/call', async ({ principal, body }) => ({ success: true as const, recorded: await recordCall(ctx, principal.userId, body) }), {
        auth: 'creator',
        body: CallBody,
        response: Recorded,
        detail: { tags, summary: 'Record an execution (the skill’s creator only; a paymentRef counts once)' },
      })
      .post(
        '/calls',
        async ({ principal, body }) => {
          const results = await recordCalls(ctx, principal.userId, body.calls);
          return { success: true as const, recorded: results.filter((r) => r.status === 'recorded').length, results };
        },
        {
          auth: 'creator',
          body: CallsBody,
          response: CallsResult,
          detail: {
            tags,
            summary:
              'Record up to 100 executions in one transaction (the skills’ creator only; a paymentRef counts once); one outcome per record: recorded, duplicate, or refused with a reason',
          },
        },
      )
      .post(
        '/usage',
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
        {
          body: UsageRequestBody,
          response: Recorded,
          detail: {
            tags,
            summary:
              'Record usage: {skillId, amount, paymentRef?} with consumer credentials, or {skillSlug, consumerAddress, paymentTxHash, amount} without; a payment counts once verified on chain',
            security: [{}, { bearer: [] }, { cookie: [] }],
          },
        },
      )
      .post(
        '/favorite',
        async ({ principal, body }) => ({
          success: true as const,
          ...(await setFavorite(ctx, principal.userId, body.skillId, body.action === 'add')),
        }),
        {
          auth: 'consumer',
          body: FavoriteBody,
          response: FavoriteResult,
          detail: { tags, summary: 'Add or remove a favorite (idempotent)' },
        },
      )
      // The caller's own lists come before `/:skillId`, which would otherwise read them as an id.
      .get(
        '/usage',
        async ({ principal, query, set, request }) => {
          const { records, nextCursor } = await listUsage(ctx, principal.userId, query);
          announceNextPage(set.headers, request.url, nextCursor);
          return records;
        },
        {
          auth: 'consumer',
          query: UsageQuery,
          response: UsageRecordList,
          detail: { tags, summary: 'Your paid calls, newest first; the next page’s cursor is in the X-Next-Cursor header' },
        },
      )
      .get(
        '/revenue.csv',
        async ({ principal, query, set }) => {
          const from = query.from ? new Date(`${query.from}T00:00:00Z`) : undefined;
          const to = query.to ? new Date(new Date(`${query.to}T00:00:00Z`).getTime() + 86_400_000) : undefined;
          const rows = await revenueLedger(ctx, principal.userId, { ...(from ? { from } : {}), ...(to ? { to } : {}) });
          set.headers['content-type'] = 'text/csv; charset=utf-8';
          set.headers['content-disposition'] = 'attachment; filename="revenue.csv"';
          return revenueCsv(rows);
        },
        {
          auth: 'creator',
          query: RevenueQuery,
          response: t.String({
            description:
              'CSV: date,skill,paid_calls,revenue_usdc,revenue_atomic,exact_atomic,channel_claimed_atomic,channel_settled_atomic,channel_unclaimed_atomic, then a total line',
          }),
          detail: {
            tags,
            summary: 'Your verified revenue per skill and day (UTC), as CSV; from/to are inclusive days (YYYY-MM-DD)',
          },
        },
      )
      .get('/channels', ({ principal, query }) => channelsOf(ctx, principal, query.role ?? 'receiver'), {
        auth: 'consumer',
        query: ChannelsQuery,
        response: ChannelList,
        detail: {
          tags,
          summary:
            'Your payment channels: of your skills (role=receiver, default) with earned, claimed and settled calls, or those you pay from (role=payer) with balance and charges',
        },
      })
      .get('/favorites', ({ principal }) => listFavorites(ctx, principal.userId), {
        auth: 'consumer',
        response: SkillList,
        detail: { tags, summary: 'Your favourite skills, most recently favourited first (inactive ones too)' },
      })
      .get('/:skillId', ({ params, query }) => getAnalytics(ctx, params.skillId, query.days ?? DEFAULT_DAYS), {
        params: SkillIdParam,
        query: AnalyticsQuery,
        response: Analytics,
        detail: { tags, summary: 'Counters and a daily series of one skill (the last `days` days, default 30)' },
      })
      .get(
        '/:skillId/payments',
        async ({ principal, params, query, set, request }) => {
          const { payments, nextCursor } = await skillPayments(ctx, principal.userId, params.skillId, query);
          announceNextPage(set.headers, request.url, nextCursor);
          return payments;
        },
        {
          auth: 'consumer',
          params: SkillIdParam,
          query: SkillPaymentsQuery,
          response: SkillPaymentList,
          detail: {
            tags,
            summary:
              'Payments reported for your skill with their on-chain check (state=rejected: reverted or mismatched ones), newest first; the next page’s cursor is in X-Next-Cursor',
          },
        },
      )
  );
}
