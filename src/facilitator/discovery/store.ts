/**
 * The facilitator's Bazaar catalogue in its table (`facilitator_resources`): what payments
 * declared, recorded per resource, and pages of it by filters for the discovery endpoints.
 */
import { and, asc, count, eq, sql, type SQL } from 'drizzle-orm';
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

export interface ResourceStore {
  /** Records a declared resource: new, or replacing what an earlier payment declared (its terms kept beside the new ones). */
  record(found: DiscoveredResource, now: Date): Promise<void>;
  /** One page, oldest first, and how many match. */
  page(filters: ResourceFilters, limit: number, offset: number): Promise<{ rows: ResourceRow[]; total: number }>;
}

export function createResourceStore(db: Database): ResourceStore {
  return {
    async record(found, now) {
      await db.transaction(async (tx) => {
        const [previous] = await tx
          .select({ accepts: resources.accepts })
          .from(resources)
          .where(eq(resources.key, found.key))
          .for('update');
        const key = termsKey(found.requirements);
        const kept = (previous?.accepts ?? []).filter((r) => termsKey(r) !== key).slice(0, MAX_ACCEPTS - 1);
        const fields = {
          resource: found.resource,
          type: found.type,
          accepts: [found.requirements, ...kept],
          description: found.description,
          mimeType: found.mimeType,
          serviceName: found.serviceName,
          tags: found.tags,
          iconUrl: found.iconUrl,
          extensions: found.extensions,
          updatedAt: now,
        };
        await tx
          .insert(resources)
          .values({ key: found.key, ...fields, createdAt: now })
          .onConflictDoUpdate({ target: resources.key, set: fields });
      });
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
