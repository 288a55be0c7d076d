import type { DatabaseHandle } from '../../db';
import type { Logger } from '../../log';
import type { ReadCache } from './read-cache';

/** The channel the catalogue's triggers notify (drizzle/0007_read_cache.sql). */
export const CHANGES_CHANNEL = 'market_changes';

/**
 * Keeps `cache` in step with writes made anywhere: each notification drops what it names
 * ('skill:<id>', or '*' for everything); each (re)start of listening clears the cache, since
 * notifications sent while the channel was down are lost. Resolves to a function that stops.
 */
export async function followChanges(database: DatabaseHandle, cache: ReadCache, logger: Logger): Promise<() => Promise<void>> {
  let started = false;
  return database.listen(
    CHANGES_CHANNEL,
    (payload) => {
      if (payload.startsWith('skill:')) cache.skillChanged(payload.slice(6));
      else cache.clear();
    },
    () => {
      if (started) logger.info('change notifications resumed; read cache cleared');
      started = true;
      cache.clear();
    },
  );
}
