import { and, asc, eq, isNull, lte, or, sql } from 'drizzle-orm';
import type { HealthConfig } from '../../../config';
import type { Database } from '../../../db';
import { serverHealth, skills } from '../../../db/schema';
import { emitEvent } from '../webhook-events';
import { setServiceQuality } from '../stats';
import type { ProbeOutcome } from './probe';
import { observe, type ProbeRecord, serviceQuality, UNKNOWN_QUALITY } from './quality';

/** Servers of active skills due for a probe, never-probed ones first. */
export async function dueServers(db: Database, now: Date, limit: number): Promise<string[]> {
  const rows = await db
    .select({ serverUrl: skills.serverUrl })
    .from(skills)
    .leftJoin(serverHealth, eq(serverHealth.serverUrl, skills.serverUrl))
    .where(and(eq(skills.isActive, true), or(isNull(serverHealth.serverUrl), lte(serverHealth.nextProbeAt, now))))
    .groupBy(skills.serverUrl)
    .orderBy(sql`min(${serverHealth.nextProbeAt}) asc nulls first`, asc(skills.serverUrl))
    .limit(limit);
  return rows.map((r) => r.serverUrl);
}

/** The call URLs of a server's active skills. */
export async function activeEndpoints(db: Database, serverUrl: string): Promise<string[]> {
  const rows = await db
    .select({ endpoint: skills.endpoint })
    .from(skills)
    .where(and(eq(skills.serverUrl, serverUrl), eq(skills.isActive, true)))
    .orderBy(asc(skills.endpoint))
    .limit(50);
  return rows.map((r) => r.endpoint);
}

/** The service quality of the skills served at `serverUrl` now (its probes so far; unknown before any). */
export async function currentServiceQuality(db: Database | Tx, serverUrl: string): Promise<number> {
  const [row] = await db
    .select({
      uptimePpm: serverHealth.uptimePpm,
      recentSuccessPpm: serverHealth.recentSuccessPpm,
      latencyAvgMs: serverHealth.latencyAvgMs,
      lastCheckedAt: serverHealth.lastCheckedAt,
    })
    .from(serverHealth)
    .where(eq(serverHealth.serverUrl, serverUrl));
  return row ? serviceQuality(row) : UNKNOWN_QUALITY;
}

/** What a claim returns: the failures in a row so far and what the earlier probes left. */
export interface Claimed {
  failures: number;
  record: ProbeRecord;
}

/**
 * Claims a due server for one probe by moving its next probe time to `leaseUntil`; undefined when
 * it is not due (another round or another registry instance has it).
 */
export async function claimServer(
  db: Database,
  serverUrl: string,
  host: string,
  now: Date,
  leaseUntil: Date,
): Promise<Claimed | undefined> {
  const [claimed] = await db
    .insert(serverHealth)
    .values({ serverUrl, host, nextProbeAt: leaseUntil })
    .onConflictDoUpdate({ target: serverHealth.serverUrl, set: { nextProbeAt: leaseUntil }, setWhere: lte(serverHealth.nextProbeAt, now) })
    .returning({
      failures: serverHealth.failures,
      uptimePpm: serverHealth.uptimePpm,
      recentSuccessPpm: serverHealth.recentSuccessPpm,
      latencyAvgMs: serverHealth.latencyAvgMs,
      lastCheckedAt: serverHealth.lastCheckedAt,
    });
  if (!claimed) return undefined;
  const { failures, ...record } = claimed;
  return { failures, record };
}

/**
 * Records a probe's outcome and schedules the next one (the backoff doubles per failure in a row);
 * an answer or a failure also moves the server's uptime, recent success and response time, and the
 * service quality of its skills with them.
 */
export async function recordOutcome(
  db: Database,
  serverUrl: string,
  outcome: ProbeOutcome,
  claimed: Claimed,
  now: Date,
  config: HealthConfig,
): Promise<void> {
  const after = (seconds: number) => new Date(now.getTime() + seconds * 1000);
  const failuresBefore = claimed.failures;
  switch (outcome.type) {
    case 'up': {
      const record = observe(claimed.record, { up: true, latencyMs: outcome.latencyMs }, now);
      await changed(db, serverUrl, 'up', now, undefined, record, (tx) =>
        tx
          .update(serverHealth)
          .set({
            status: 'up',
            latencyMs: outcome.latencyMs,
            uptimePpm: record.uptimePpm,
            recentSuccessPpm: record.recentSuccessPpm,
            latencyAvgMs: record.latencyAvgMs,
            failures: 0,
            lastError: null,
            lastCheckedAt: now,
            lastUpAt: now,
            downSince: null,
            nextProbeAt: after(config.intervalSeconds),
            offers: outcome.offers ?? null,
          })
          .where(eq(serverHealth.serverUrl, serverUrl)),
      );
      return;
    }
    case 'down': {
      const backoff = Math.min(config.intervalSeconds * 2 ** Math.min(failuresBefore, 20), config.maxBackoffSeconds);
      const record = observe(claimed.record, { up: false }, now);
      await changed(db, serverUrl, 'down', now, outcome.reason, record, (tx) =>
        tx
          .update(serverHealth)
          .set({
            status: 'down',
            latencyMs: null,
            uptimePpm: record.uptimePpm,
            recentSuccessPpm: record.recentSuccessPpm,
            failures: failuresBefore + 1,
            lastError: outcome.reason.slice(0, 500),
            lastCheckedAt: now,
            downSince: sql`coalesce(${serverHealth.downSince}, ${now.toISOString()}::timestamptz)`,
            nextProbeAt: after(backoff),
          })
          .where(eq(serverHealth.serverUrl, serverUrl)),
      );
      return;
    }
    case 'refused':
      // Never probed, so neither up nor down; looked at again rarely in case its address changes.
      await db
        .update(serverHealth)
        .set({
          status: 'unknown',
          latencyMs: null,
          failures: 0,
          lastError: outcome.reason.slice(0, 500),
          lastCheckedAt: now,
          downSince: null,
          nextProbeAt: after(config.maxBackoffSeconds),
        })
        .where(eq(serverHealth.serverUrl, serverUrl));
      return;
  }
}

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

/**
 * Records a probe's status and, when the server went from up to down or back, tells the creators
 * of its active skills (`skill.down`, `skill.up` webhooks) in the same transaction.
 */
async function changed(
  db: Database,
  serverUrl: string,
  status: 'up' | 'down',
  now: Date,
  reason: string | undefined,
  record: ProbeRecord,
  update: (tx: Tx) => Promise<unknown>,
): Promise<void> {
  await db.transaction(async (tx) => {
    const [before] = await tx
      .select({ status: serverHealth.status })
      .from(serverHealth)
      .where(eq(serverHealth.serverUrl, serverUrl))
      .for('update');
    await update(tx);
    await setServiceQuality(tx, serverUrl, serviceQuality(record));
    const from = before?.status;
    if (!((from === 'up' && status === 'down') || (from === 'down' && status === 'up'))) return;
    const affected = await tx
      .select({ creatorId: skills.creatorId, slug: skills.slug })
      .from(skills)
      .where(and(eq(skills.serverUrl, serverUrl), eq(skills.isActive, true)));
    const byCreator = new Map<string, string[]>();
    for (const s of affected) byCreator.set(s.creatorId, [...(byCreator.get(s.creatorId) ?? []), s.slug]);
    for (const [userId, slugs] of byCreator) {
      const data = { server: serverUrl, skills: slugs.sort(), ...(reason ? { reason: reason.slice(0, 300) } : {}) };
      await emitEvent(tx, { userId, type: status === 'down' ? 'skill.down' : 'skill.up', at: now, data });
    }
  });
}
