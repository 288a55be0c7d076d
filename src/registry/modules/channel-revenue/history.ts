/**
 * A consumer's channel calls as their history shows them: each usage record that names a channel
 * (or, from an older client, the digest of its voucher as a `paymentRef`) joined to the skill
 * server's record of the same call and the channel's state on chain: charged (no server record
 * yet), earned, claimed, settled or refused.
 */
import { and, eq, inArray, or, type SQL } from 'drizzle-orm';
import type { UsageChannelView } from 'skill-market/registry';
import type { Database } from '../../../db';
import { channelCalls, paymentChannels } from '../../../db/schema';

/** What a usage record says of how it was paid. */
export interface UsagePayment {
  skillId: string;
  paymentRef: string | null;
  channelId: string | null;
  cumulative: bigint | null;
  depositTransaction: string | null;
  depositAmount: bigint | null;
}

type ServerRecord = {
  skillId: string;
  channelId: string;
  cumulative: bigint;
  status: 'earned' | 'counted' | 'refused';
  reason: string | null;
  voucherDigest: string | null;
  settledClaimed: bigint;
};

const columns = {
  skillId: channelCalls.skillId,
  channelId: channelCalls.channelId,
  cumulative: channelCalls.cumulative,
  status: channelCalls.status,
  reason: channelCalls.reason,
  voucherDigest: channelCalls.voucherDigest,
  settledClaimed: paymentChannels.settledClaimed,
};

/**
 * The channel view of each usage record, in order: null for a transfer. Two reads at most for a
 * page: the server records named by channel and cumulative charge, and those an older client's
 * voucher digest names.
 */
export async function channelViewsOf(db: Database, records: readonly UsagePayment[]): Promise<(UsageChannelView | null)[]> {
  const named = records.filter((r) => r.channelId !== null && r.cumulative !== null);
  const digests = records.filter((r) => r.channelId === null && r.paymentRef !== null);
  const serverRecords = (where: SQL | undefined) =>
    db.select(columns).from(channelCalls).innerJoin(paymentChannels, eq(paymentChannels.channelId, channelCalls.channelId)).where(where);
  const [byCall, byDigest] = await Promise.all([
    named.length === 0
      ? []
      : serverRecords(
          or(
            ...named.map((r) =>
              and(
                eq(channelCalls.skillId, r.skillId),
                eq(channelCalls.channelId, r.channelId!),
                eq(channelCalls.cumulative, r.cumulative!),
              ),
            ),
          ),
        ),
    digests.length === 0
      ? []
      : serverRecords(
          and(
            inArray(channelCalls.skillId, [...new Set(digests.map((r) => r.skillId))]),
            inArray(channelCalls.voucherDigest, [...new Set(digests.map((r) => r.paymentRef!.toLowerCase()))]),
          ),
        ),
  ]);
  const callKey = (skillId: string, channelId: string, cumulative: bigint) => `${skillId}\n${channelId}\n${cumulative}`;
  const calls = new Map<string, ServerRecord>(byCall.map((c) => [callKey(c.skillId, c.channelId, c.cumulative), c]));
  const vouchers = new Map<string, ServerRecord>(byDigest.map((c) => [`${c.skillId}\n${c.voucherDigest}`, c]));
  return records.map((r) => {
    if (r.channelId !== null) {
      const server = r.cumulative === null ? undefined : calls.get(callKey(r.skillId, r.channelId, r.cumulative));
      return view(r.channelId, r.cumulative, server, r);
    }
    const server = r.paymentRef === null ? undefined : vouchers.get(`${r.skillId}\n${r.paymentRef.toLowerCase()}`);
    return server ? view(server.channelId, server.cumulative, server, r) : null;
  });
}

function view(channelId: string, cumulative: bigint | null, server: ServerRecord | undefined, record: UsagePayment): UsageChannelView {
  const state: UsageChannelView['state'] = !server
    ? 'charged'
    : server.status === 'earned'
      ? 'earned'
      : server.status === 'refused'
        ? 'refused'
        : server.cumulative <= server.settledClaimed
          ? 'settled'
          : 'claimed';
  return {
    channelId,
    chargedCumulativeAmount: cumulative?.toString() ?? null,
    state,
    reason: state === 'refused' ? server!.reason : null,
    depositTransaction: record.depositTransaction,
    depositAmountAtomic: record.depositAmount?.toString() ?? null,
  };
}

/** Whether `digest` is the voucher digest of a call the skill's server reported over a channel. */
export async function isChannelVoucher(db: Database, skillId: string, digest: string): Promise<boolean> {
  const [found] = await db
    .select({ id: channelCalls.id })
    .from(channelCalls)
    .where(and(eq(channelCalls.skillId, skillId), eq(channelCalls.voucherDigest, digest.toLowerCase())))
    .limit(1);
  return found !== undefined;
}
