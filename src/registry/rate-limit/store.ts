import { sql } from 'drizzle-orm';
import type { Database } from '../../db';
import { rateLimits } from '../../db/schema';

/** One hit in a fixed window: the count so far in this window, and when the window ends. */
export interface Hit {
  count: number;
  resetAt: number;
}

export interface RateLimitStore {
  hit(key: string, windowMs: number, nowMs: number): Promise<Hit>;
}

/**
 * Counters in PostgreSQL, shared by every registry instance on the database: one upsert per
 * request, atomic under concurrency. The table is UNLOGGED: counters need no crash safety.
 */
export function postgresRateLimitStore(db: Database): RateLimitStore {
  let hits = 0;
  return {
    async hit(key, windowMs, nowMs) {
      const windowStart = Math.floor(nowMs / windowMs) * windowMs;
      const [row] = await db
        .insert(rateLimits)
        .values({ key, windowStart, count: 1 })
        .onConflictDoUpdate({
          target: rateLimits.key,
          set: {
            count: sql`case when ${rateLimits.windowStart} >= excluded.window_start then ${rateLimits.count} + 1 else 1 end`,
            windowStart: sql`greatest(${rateLimits.windowStart}, excluded.window_start)`,
          },
        })
        .returning({ count: rateLimits.count, windowStart: rateLimits.windowStart });
      if (++hits % 1000 === 0) {
        // Old windows are dead weight; drop them now and then (a day is longer than any window).
        db.delete(rateLimits)
          .where(sql`${rateLimits.windowStart} < ${nowMs - 86_400_000}`)
          .catch(() => {});
      }
      return { count: row?.count ?? 1, resetAt: (row?.windowStart ?? windowStart) + windowMs };
    },
  };
}

/** Counters in this process, for the embedded database (one process by construction). */
export function memoryRateLimitStore(maxKeys = 100_000): RateLimitStore {
  const windows = new Map<string, { start: number; count: number }>();
  return {
    async hit(key, windowMs, nowMs) {
      const start = Math.floor(nowMs / windowMs) * windowMs;
      const current = windows.get(key);
      const entry = current && current.start >= start ? current : { start, count: 0 };
      entry.count++;
      windows.set(key, entry);
      if (windows.size > maxKeys) {
        for (const [k, v] of windows) if (v.start + windowMs <= nowMs) windows.delete(k);
      }
      return { count: entry.count, resetAt: entry.start + windowMs };
    },
  };
}
