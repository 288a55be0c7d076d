/**
 * `scheme=batch-settlement`: the listings whose accepts include a channel offer. Whether one does
 * is decided by the same check that builds its accepts (offers.ts, on the listing's terms), so
 * the filter and the listing never disagree; SQL first narrows to skills whose server reported a
 * channel offer at all, and the skills found are then a condition on `skills.id`, so pages,
 * totals and search cursors stay SQL's.
 */
import { and, eq, sql, type SQL } from 'drizzle-orm';
import { type AssetInfo, BATCH_SETTLEMENT_SCHEME } from 'skill-market/x402';
import { serverHealth, skills } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import type { PaymentAssets } from './assets';
import { listingAccepts } from './item';
import { offersFor, reportedOffers } from './reported';
import { listedWhere } from '../skills';

/** The server reported some offer of the channel scheme (under any skill name). */
const reportsChannels = sql`jsonb_path_exists(${serverHealth.offers}, '$.*[*] ? (@.scheme == "batch-settlement")')`;

/** The ids of the active skills within `conditions` whose listed accepts include a channel offer. */
export async function channelSkillIds(ctx: ServiceContext, assets: PaymentAssets, conditions: readonly SQL[]): Promise<string[]> {
  const rows = await ctx.db
    .select({
      id: skills.id,
      priceAtomic: skills.priceAtomic,
      paymentAddress: skills.paymentAddress,
      network: skills.network,
      endpoint: skills.endpoint,
    })
    .from(skills)
    .innerJoin(serverHealth, eq(serverHealth.serverUrl, skills.serverUrl))
    .where(and(listedWhere(ctx.config.health), ...conditions, reportsChannels));
  if (rows.length === 0) return [];
  const networks = [...new Set(rows.map((r) => r.network))];
  const [offers, assetList] = await Promise.all([
    reportedOffers(
      ctx,
      rows.map((r) => r.endpoint),
    ),
    Promise.all(networks.map(async (n) => [n, await assets.assetOf(n)] as const)),
  ]);
  const assetOf = new Map<string, AssetInfo>(assetList);
  return rows
    .filter((r) =>
      listingAccepts({ ...r, priceAtomic: r.priceAtomic.toString() }, assetOf.get(r.network)!, offersFor(r.endpoint, offers)).some(
        (a) => a.scheme === BATCH_SETTLEMENT_SCHEME,
      ),
    )
    .map((r) => r.id);
}
