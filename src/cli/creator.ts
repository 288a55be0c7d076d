/**
 * What the creator's commands (serve --dev, group, skill) share: the registry and creator key,
 * from `--dev [dir]` (the demo creator of a `market dev`) or as the consumer commands find them
 * (flags, MARKET_API_URL / MARKET_API_KEY, the stored login), and making the groups skills name.
 */
import { RegistryClient } from 'skill-market/registry';
import type { Env } from '../config';
import { readDevProfile, type DevProfile } from '../dev/profile';
import { resolveConnection, type Connection } from './consumer';

export interface CreatorFlags {
  dev?: string | undefined;
  'api-url'?: string | undefined;
  'api-key'?: string | undefined;
}

/** The registry and a creator key; with --dev the dev marketplace's demo creator (flags still win). */
export async function creatorConnection(flags: CreatorFlags, env: Env): Promise<Connection & { profile?: DevProfile }> {
  if (flags.dev === undefined) return resolveConnection(flags, env);
  const profile = readDevProfile(flags.dev);
  return { apiUrl: flags['api-url'] ?? profile.apiUrl, apiKey: flags['api-key'] ?? profile.creatorKey, profile };
}

export const registryClient = (connection: Connection) =>
  new RegistryClient({ apiUrl: connection.apiUrl, apiKey: connection.apiKey, userAgent: 'market' });

/** Creates the groups of `names` the creator (by wallet address) does not have yet; answers the names it made. */
export async function ensureGroups(client: RegistryClient, creatorAddress: string, names: readonly string[]): Promise<string[]> {
  const existing = new Set((await client.groups(creatorAddress)).flatMap((g) => [g.name.toLowerCase(), g.slug.toLowerCase()]));
  const made: string[] = [];
  for (const name of new Set(names)) {
    if (existing.has(name.toLowerCase())) continue;
    await client.createGroup({ name });
    existing.add(name.toLowerCase());
    made.push(name);
  }
  return made;
}
