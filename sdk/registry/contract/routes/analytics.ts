/** The analytics routes: views, executions, paid calls, favourites, a skill's counters and payments, revenue and channels. */
import { Type as T } from '@sinclair/typebox';
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
  RevenueQuery,
  SkillIdParam,
  SkillPaymentList,
  SkillPaymentsQuery,
  UsageQuery,
  UsageRecordList,
  UsageRequest,
  ViewBody,
} from '../analytics';
import { SkillList } from '../skills';
import type { Route } from './route';

/** Answer of `GET /analytics/revenue.csv`: the ledger as CSV text. */
const RevenueCsv = T.String({
  description:
    'CSV: date,skill,paid_calls,revenue_usdc,revenue_atomic,exact_atomic,channel_claimed_atomic,channel_settled_atomic,channel_unclaimed_atomic, then a total line',
});

const tag = 'Analytics';

export const analyticsRoutes = {
  recordView: {
    method: 'POST',
    path: '/analytics/view',
    access: 'public',
    body: ViewBody as typeof ViewBody,
    response: Recorded as typeof Recorded,
    tag,
    summary: 'Record a page view (once per IP per skill within the window)',
  },
  recordCall: {
    method: 'POST',
    path: '/analytics/call',
    access: 'creator',
    body: CallBody as typeof CallBody,
    response: Recorded as typeof Recorded,
    tag,
    summary: 'Record an execution (the skill’s creator only; a paymentRef counts once)',
  },
  recordCalls: {
    method: 'POST',
    path: '/analytics/calls',
    access: 'creator',
    body: CallsBody as typeof CallsBody,
    response: CallsResult as typeof CallsResult,
    tag,
    summary:
      'Record up to 100 executions in one transaction (the skills’ creator only; a paymentRef counts once); one outcome per record: recorded, duplicate, or refused with a reason',
  },
  recordUsage: {
    method: 'POST',
    path: '/analytics/usage',
    access: 'consumer-or-payment',
    body: UsageRequest as typeof UsageRequest,
    response: Recorded as typeof Recorded,
    tag,
    summary:
      'Record usage: {skillId, amountAtomic, paymentRef?} (or, paid over a payment channel, {skillId, amountAtomic, channelId, chargedCumulativeAmount}) with consumer credentials, or {skillSlug, consumerAddress, paymentTxHash, amount} without; a payment counts once verified on chain',
  },
  favorite: {
    method: 'POST',
    path: '/analytics/favorite',
    access: 'consumer',
    body: FavoriteBody as typeof FavoriteBody,
    response: FavoriteResult as typeof FavoriteResult,
    tag,
    summary: 'Add or remove a favorite (idempotent)',
  },
  usage: {
    method: 'GET',
    path: '/analytics/usage',
    access: 'consumer',
    query: UsageQuery as typeof UsageQuery,
    response: UsageRecordList as typeof UsageRecordList,
    tag,
    summary: 'Your paid calls, newest first; the next page’s cursor is in the X-Next-Cursor header',
  },
  revenueCsv: {
    method: 'GET',
    path: '/analytics/revenue.csv',
    access: 'creator',
    query: RevenueQuery as typeof RevenueQuery,
    response: RevenueCsv as typeof RevenueCsv,
    tag,
    summary: 'Your verified revenue per skill and day (UTC), as CSV; from/to are inclusive days (YYYY-MM-DD)',
  },
  channels: {
    method: 'GET',
    path: '/analytics/channels',
    access: 'consumer',
    query: ChannelsQuery as typeof ChannelsQuery,
    response: ChannelList as typeof ChannelList,
    tag,
    summary:
      'Your payment channels: of your skills (role=receiver, default) with earned, claimed and settled calls, or those you pay from (role=payer) with balance and charges',
  },
  favorites: {
    method: 'GET',
    path: '/analytics/favorites',
    access: 'consumer',
    response: SkillList as typeof SkillList,
    tag,
    summary: 'Your favourite skills, most recently favourited first (inactive ones too)',
  },
  analytics: {
    method: 'GET',
    path: '/analytics/:skillId',
    access: 'public',
    params: SkillIdParam as typeof SkillIdParam,
    query: AnalyticsQuery as typeof AnalyticsQuery,
    response: Analytics as typeof Analytics,
    tag,
    summary: 'Counters and a daily series of one skill (the last `days` days, default 30)',
  },
  skillPayments: {
    method: 'GET',
    path: '/analytics/:skillId/payments',
    access: 'consumer',
    params: SkillIdParam as typeof SkillIdParam,
    query: SkillPaymentsQuery as typeof SkillPaymentsQuery,
    response: SkillPaymentList as typeof SkillPaymentList,
    tag,
    summary:
      'Payments reported for your skill with their on-chain check (state=rejected: reverted or mismatched ones), newest first; the next page’s cursor is in X-Next-Cursor',
  },
} satisfies Record<string, Route>;
