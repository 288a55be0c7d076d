import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The cache folder of the tests and of the processes they start (their XDG_CACHE_HOME): one per
 * checkout, so the migrated embedded template (src/db/template.ts) is made once and shared.
 */
export const TEST_CACHE_HOME = fileURLToPath(new URL('../../node_modules/.cache/', import.meta.url));
/** The product's folder under it (readCacheDir's `skill-market`). */
export const TEST_CACHE_DIR = join(TEST_CACHE_HOME, 'skill-market');
