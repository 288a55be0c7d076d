import { inArray } from 'drizzle-orm';
import { serverHealth } from '../../../db/schema';
import type { ServiceContext } from '../../context';

/** Each server's offers as its last health answer reported them (`accepts` by skill name), by server URL. */
export type ReportedOffers = Map<string, Record<string, unknown[]>>;

/** The offers each of these endpoints' servers last reported in its health answer. */
export async function reportedOffers(ctx: ServiceContext, endpoints: readonly string[]): Promise<ReportedOffers> {
  const servers = [...new Set(endpoints.map((e) => serverAndName(e).server))];
  if (servers.length === 0) return new Map();
  const rows = await ctx.db
    .select({ serverUrl: serverHealth.serverUrl, offers: serverHealth.offers })
    .from(serverHealth)
    .where(inArray(serverHealth.serverUrl, servers));
  return new Map(rows.flatMap((r) => (r.offers ? [[r.serverUrl, r.offers] as const] : [])));
}

/** What the server of `endpoint` reported for the skill there (undefined: nothing). */
export function offersFor(endpoint: string, reported: ReportedOffers): unknown[] | undefined {
  const { server, name } = serverAndName(endpoint);
  const own = reported.get(server);
  return own && Object.hasOwn(own, name) && Array.isArray(own[name]) ? own[name] : undefined;
}

/** A skill endpoint's server URL (as the database derives `skills.server_url`) and its last path segment, the skill's name there. */
function serverAndName(endpoint: string): { server: string; name: string } {
  const server = endpoint.replace(/\/[^/?#]*([?#].*)?$/, '');
  return { server, name: decodeSegment(endpoint.slice(server.length + 1).replace(/[?#].*$/, '')) };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
