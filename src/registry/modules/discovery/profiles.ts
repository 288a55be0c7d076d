import { inArray } from 'drizzle-orm';
import type { Database } from '../../../db';
import { users } from '../../../db/schema';
import type { Clock } from '../../context';
import type { CreatorProfile } from './item';

/** How long a creator's name and avatar are reused: a profile edit sends no change notice, so this bounds how late it shows. */
const PROFILE_MAX_AGE_MS = 10_000;
/** Profiles kept at most; the oldest go first. */
const MAX_PROFILES = 10_000;

/**
 * Creators' profiles for Bazaar resources, read for many creators in one statement and reused for
 * {@link PROFILE_MAX_AGE_MS}, so a catalogue page costs no more statements than a skill search.
 */
export function creatorProfiles(clock: Clock) {
  const kept = new Map<string, { profile: CreatorProfile; readAt: number }>();
  return async (db: Database, ids: readonly string[]): Promise<Map<string, CreatorProfile>> => {
    const now = clock.now().getTime();
    const found = new Map<string, CreatorProfile>();
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const entry = kept.get(id);
      const age = entry ? now - entry.readAt : -1;
      if (entry && age >= 0 && age < PROFILE_MAX_AGE_MS) found.set(id, entry.profile);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    const rows = await db.select({ id: users.id, name: users.name, avatar: users.avatar }).from(users).where(inArray(users.id, missing));
    for (const { id, ...profile } of rows) {
      found.set(id, profile);
      kept.delete(id);
      if (kept.size >= MAX_PROFILES) kept.delete(kept.keys().next().value!);
      kept.set(id, { profile, readAt: now });
    }
    return found;
  };
}

/** Reads creators' profiles; see {@link creatorProfiles}. */
export type CreatorProfiles = ReturnType<typeof creatorProfiles>;
