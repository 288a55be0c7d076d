/**
 * The facilitator's Bazaar catalogue in its table (`facilitator_resources`): what payments
 * declared, recorded per resource, the terms read from each resource's live 402, and pages of it
 * by filters for the discovery endpoints.
 */
import { isDeepStrictEqual } from 'node:util';
import { and, asc, count, eq, inArray, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../db';
import { facilitatorResources as resources } from '../../db/schema';
import type { DiscoveredResource } from './declaration';

export type ResourceRow = typeof resources.$inferSelect;

/** Filters of both discovery endpoints, already normalized (network CAIP-2, keys lowercase). */
export interface ResourceFilters {
  type?: string | undefined;
  payTo?: string | undefined;
  scheme?: string | undefined;
  network?: string | undefined;
  /** Words each resource must contain (search). */
  words?: readonly string[];
}

/** The most payment requirements kept per resource (one per scheme, network, asset and payee). */
const MAX_ACCEPTS = 20;

const termsKey = (r: Record<string, unknown>) => [r.scheme, r.network, r.asset, r.payTo].map((v) => String(v).toLowerCase()).join('|');

/**
 * A payment at terms its listing lacks (the server changed them) makes its resource's 402 due at
 * once, but not more often than this: a payer's own verify calls cannot turn the facilitator into
 * a stream of requests to one server.
 */
const RECHECK_FLOOR_MS = 60_000;

/** A resource whose live 402 is to be read. */
export interface DueResource {
  key: string;
  resource: string;
  extensions: Record<string, unknown>;
}

export interface ResourceStore {
  /**
   * Records a declared resource: new, or replacing what an earlier payment declared. Until its live
   * 402 was read its terms are the paid ones (kept beside earlier payments'); after, the live ones
   * stay. Its 402 becomes due at once when it is new or was paid at terms it does not list.
   * Answers whether a read became due.
   */
  record(found: DiscoveredResource, now: Date): Promise<boolean>;
  /** One page, oldest first, and how many match. */
  page(filters: ResourceFilters, limit: number, offset: number): Promise<{ rows: ResourceRow[]; total: number }>;
  /**
   * Takes up to `limit` HTTP resources whose 402 is due (never read, or last read at or before
   * `dueBefore`), never-read first, then the longest unread; marks them read at `now` so that
   * another pass (another instance's too) does not take them.
   */
  claimDue(now: Date, dueBefore: Date, limit: number): Promise<DueResource[]>;
  /** Lists a resource's live offers, in the server's order. */
  saveLive(key: string, accepts: Record<string, unknown>[], now: Date): Promise<void>;
  /**
   * A failed read: the resource keeps its terms and is failing from now (or from its first failed
   * read); dropped when that is at or before `dropBefore`. Answers whether it was dropped.
   */
  saveFailure(key: string, now: Date, dropBefore: Date): Promise<boolean>;
}

export function createResourceStore(db: Database): ResourceStore {
  return {
    async record(found, now) {
      return db.transaction(async (tx) => {
        const [previous] = await tx
          .select({ accepts: resources.accepts, liveAt: resources.liveAt, checkedAt: resources.checkedAt })
          .from(resources)
          .where(eq(resources.key, found.key))
          .for('update');
        const key = termsKey(found.requirements);
        const listed = previous?.accepts ?? [];
        const kept = listed.filter((r) => termsKey(r) !== key).slice(0, MAX_ACCEPTS - 1);
        const live = previous?.liveAt != null;
        const unlisted = !listed.some((r) => isDeepStrictEqual(r, found.requirements));
        const due =
          previous === undefined ||
          (unlisted && (previous.checkedAt === null || previous.checkedAt.getTime() <= now.getTime() - RECHECK_FLOOR_MS));
        const fields = {
          resource: found.resource,
          type: found.type,
          accepts: live ? listed : [found.requirements, ...kept],
          description: found.description,
          mimeType: found.mimeType,
          serviceName: found.serviceName,
          tags: found.tags,
          iconUrl: found.iconUrl,
          extensions: found.extensions,
          updatedAt: now,
          ...(due ? { checkedAt: null } : {}),
        };
        await tx
          .insert(resources)
          .values({ key: found.key, ...fields, createdAt: now })
          .onConflictDoUpdate({ target: resources.key, set: fields });
        return due;
      });
    },

    async claimDue(now, dueBefore, limit) {
      return db.transaction(async (tx) => {
        const due = await tx
          .select({ key: resources.key, resource: resources.resource, extensions: resources.extensions })
          .from(resources)
          .where(and(eq(resources.type, 'http'), or(isNull(resources.checkedAt), lte(resources.checkedAt, dueBefore))))
          .orderBy(sql`${resources.checkedAt} asc nulls first`, asc(resources.key))
          .limit(limit)
          .for('update', { skipLocked: true });
        if (due.length > 0) {
          await tx
            .update(resources)
            .set({ checkedAt: now })
            .where(
              inArray(
                resources.key,
                due.map((d) => d.key),
              ),
            );
        }
        return due;
      });
    },

    async saveLive(key, accepts, now) {
      await db.update(resources).set({ accepts, liveAt: now, failingSince: null, updatedAt: now }).where(eq(resources.key, key));
    },

    async saveFailure(key, now, dropBefore) {
      const [row] = await db
        .update(resources)
        .set({ failingSince: sql`coalesce(${resources.failingSince}, ${now.toISOString()}::timestamptz)` })
        .where(eq(resources.key, key))
        .returning({ failingSince: resources.failingSince });
      if (!row?.failingSince || row.failingSince.getTime() > dropBefore.getTime()) return false;
      await db.delete(resources).where(and(eq(resources.key, key), lte(resources.failingSince, dropBefore)));
      return true;
    },

    async page(filters, limit, offset) {
      const where = and(...conditions(filters));
      const [counted] = await db.select({ n: count() }).from(resources).where(where);
      const total = counted?.n ?? 0;
      const rows =
        offset < total
          ? await db.select().from(resources).where(where).orderBy(asc(resources.createdAt), asc(resources.key)).limit(limit).offset(offset)
          : [];
      return { rows, total };
    },
  };
}

/** A term of the resource's recorded payment requirements equals `value` (compared without case). */
const someTerm = (field: string, value: string) =>
  sql`exists (select 1 from jsonb_array_elements(${resources.accepts}) as t(terms) where lower(t.terms ->> ${field}) = ${value.toLowerCase()})`;

function conditions(filters: ResourceFilters): SQL[] {
  const where: SQL[] = [];
  if (filters.type) where.push(eq(resources.type, filters.type as 'http' | 'mcp'));
  if (filters.payTo) where.push(someTerm('payTo', filters.payTo));
  if (filters.scheme) where.push(someTerm('scheme', filters.scheme));
  if (filters.network) where.push(someTerm('network', filters.network));
  for (const word of filters.words ?? []) {
    const pattern = `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    where.push(
      sql`(${resources.resource} || ' ' || coalesce(${resources.description}, '') || ' ' || coalesce(${resources.serviceName}, '') || ' ' || coalesce(${resources.tags}::text, '')) ilike ${pattern}`,
    );
  }
  return where;
}
