import { sql } from 'drizzle-orm';
import type { Database } from '../../../db';
import { resultRows } from '../../../db/rows';

/** The skill servers of active skills by their last probe, for the metrics (read at scrape time). */
export interface ServerHealthSummary {
  up: number;
  down: number;
  /** Not probed yet, or probing them was refused (an address the registry does not probe). */
  unknown: number;
  /** The longest current outage, seconds; 0 when none is down. */
  longestOutageSeconds: number;
}

export async function serverHealthSummary(db: Database, now: Date): Promise<ServerHealthSummary> {
  const rows = resultRows<{ status: string | null; servers: number | string; down_since: string | Date | null }>(
    await db.execute(sql`
      select h.status, count(*) as servers, min(h.down_since) as down_since
      from (select distinct server_url from skills where is_active) s
      left join server_health h on h.server_url = s.server_url
      group by h.status`),
  );
  const summary: ServerHealthSummary = { up: 0, down: 0, unknown: 0, longestOutageSeconds: 0 };
  for (const row of rows) {
    const status = row.status === 'up' || row.status === 'down' ? row.status : 'unknown';
    summary[status] += Number(row.servers);
    if (status === 'down' && row.down_since) {
      summary.longestOutageSeconds = Math.max(0, (now.getTime() - new Date(row.down_since).getTime()) / 1000);
    }
  }
  return summary;
}
