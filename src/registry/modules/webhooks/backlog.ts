import { sql } from 'drizzle-orm';
import type { Database } from '../../../db';
import { resultRows } from '../../../db/rows';

/** What waits to be sent, for the metrics: read at scrape time, one statement over partial indexes. */
export interface WebhookBacklog {
  /** Deliveries not yet delivered nor failed for good (due now or waiting for a retry). */
  pending: number;
  /** Age of the oldest of them, seconds; 0 when none. */
  oldestPendingSeconds: number;
  /** Endpoints the registry turned off because their deliveries kept failing. */
  disabledEndpoints: number;
}

export async function webhookBacklog(db: Database, now: Date): Promise<WebhookBacklog> {
  const [row] = resultRows<{ pending: number | string; oldest: string | Date | null; disabled: number | string }>(
    await db.execute(sql`
      select
        (select count(*) from webhook_deliveries where status = 'pending') as pending,
        (select min(created_at) from webhook_deliveries where status = 'pending') as oldest,
        (select count(*) from webhook_endpoints where not enabled and disabled_reason is not null) as disabled`),
  );
  const oldest = row?.oldest ? new Date(row.oldest).getTime() : undefined;
  return {
    pending: Number(row?.pending ?? 0),
    oldestPendingSeconds: oldest === undefined ? 0 : Math.max(0, (now.getTime() - oldest) / 1000),
    disabledEndpoints: Number(row?.disabled ?? 0),
  };
}
