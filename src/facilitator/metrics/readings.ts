/**
 * What the facilitator's gauges read when scraped: its transactions not yet final, per scheme,
 * and the hosted channels' vouchers not yet claimed. One statement each, over partial indexes or
 * a table of one row per channel.
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../../db';
import { resultRows } from '../../db/rows';

export interface PendingTransactions {
  /** Transactions sent (or recorded to send) and not yet final, by scheme wire id. */
  count: Record<'exact' | 'batch-settlement', number>;
  /** Age of the oldest of each scheme's, seconds; 0 when none. */
  oldestSeconds: Record<'exact' | 'batch-settlement', number>;
}

type Row = { scheme: string; pending: number | string; oldest: string | Date | null };

export async function pendingTransactions(db: Database, now: Date): Promise<PendingTransactions> {
  const rows = resultRows<Row>(
    await db.execute(sql`
      select 'exact' as scheme, count(*) as pending, min(submitted_at) as oldest
        from (select submitted_at from payment_receipts where status = 'pending'
              union all select submitted_at from payment_batches where status = 'pending') p
      union all
      select 'batch-settlement', count(*), min(created_at) from channel_operations where state in ('queued', 'sent')`),
  );
  const result: PendingTransactions = { count: { exact: 0, 'batch-settlement': 0 }, oldestSeconds: { exact: 0, 'batch-settlement': 0 } };
  for (const row of rows) {
    const scheme = row.scheme === 'exact' ? 'exact' : 'batch-settlement';
    result.count[scheme] = Number(row.pending);
    if (row.oldest) result.oldestSeconds[scheme] = Math.max(0, (now.getTime() - new Date(row.oldest).getTime()) / 1000);
  }
  return result;
}

export interface ClaimsDue {
  /** Hosted channels charged beyond what was claimed on chain: vouchers the receiver has yet to claim. */
  channels: number;
  /** Age of the oldest unclaimed charge, seconds; 0 when none. */
  oldestSeconds: number;
}

/**
 * Of the channels the facilitator keeps for skill servers (hosted channels); channels a skill
 * server keeps itself are not seen here.
 */
export async function claimsDue(db: Database, now: Date): Promise<ClaimsDue> {
  const [row] = resultRows<{ channels: number | string; since: number | string | null }>(
    await db.execute(sql`
      select count(*) as channels, min(nullif((state->>'unclaimedSince')::numeric, 0)) as since
      from hosted_channels
      where state is not null and charged_cumulative_amount > coalesce((state->>'totalClaimed')::numeric, 0)`),
  );
  const since = row?.since === null || row?.since === undefined ? undefined : Number(row.since);
  return {
    channels: Number(row?.channels ?? 0),
    oldestSeconds: since === undefined ? 0 : Math.max(0, (now.getTime() - since) / 1000),
  };
}
