import type { Clock } from '../../runtime/clock';

/** One answer as sent: its JSON body, its entity tag, and headers of its own (e.g. the next page's link). */
export interface CachedAnswer {
  body: string;
  etag: string;
  headers?: Record<string, string>;
}

interface Entry {
  answer: CachedAnswer;
  /** When the load that produced it started: the data is at least this new. */
  loadedAt: number;
  skillId?: string;
}

type Loader = () => Promise<{ answer: CachedAnswer; skillId?: string }>;

/** Entries per kind (listings, search pages) before the oldest go. */
const DEFAULT_MAX_ENTRIES = 10_000;

/**
 * An in-process cache of public discovery answers: skill listings by slug and search pages by
 * query. An answer is served while younger than `maxAgeMs` (the bound on counters, which change
 * without notice); any change to a skill's listing (NOTIFY from another instance, or this
 * instance's own write) drops that listing and every search page at once.
 *
 * - One load per key at a time; requests for a key being loaded wait for it.
 * - Past half its age an entry is reloaded in the background while it is still served, so a
 *   busy key never makes requests wait.
 * - A load that overlaps an invalidation is answered to its waiters but not kept: it may have
 *   read the data from before the change.
 * - Not-found and errors are never kept.
 */
export class ReadCache {
  private readonly listings = new Map<string, Entry>();
  private readonly slugOf = new Map<string, string>();
  private readonly searches = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<CachedAnswer>>();
  private epoch = 0;
  /** Counts for tests and the bench: answers served from memory, and loads. */
  readonly stats = { hits: 0, loads: 0 };

  constructor(
    readonly maxAgeMs: number,
    private readonly clock: Clock,
    private readonly maxEntries = DEFAULT_MAX_ENTRIES,
  ) {}

  /** The listing of `slug`; `load` reads it and tells the skill's id. */
  listing(slug: string, load: () => Promise<{ answer: CachedAnswer; skillId: string }>): Promise<CachedAnswer> {
    return this.get(this.listings, `l:${slug}`, slug, load);
  }

  /** The search page for `key` (the normalized query). */
  search(key: string, load: () => Promise<CachedAnswer>): Promise<CachedAnswer> {
    return this.get(this.searches, `s:${key}`, key, async () => ({ answer: await load() }));
  }

  /** One skill's listing changed (content, membership or counters): its entry and every search page go. */
  skillChanged(skillId: string): void {
    this.epoch++;
    this.loading.clear();
    const slug = this.slugOf.get(skillId);
    if (slug !== undefined) {
      this.listings.delete(slug);
      this.slugOf.delete(skillId);
    }
    this.searches.clear();
  }

  /** Anything may have changed (a group renamed, a server's health, a lost notification channel). */
  clear(): void {
    this.epoch++;
    this.loading.clear();
    this.listings.clear();
    this.slugOf.clear();
    this.searches.clear();
  }

  private get(map: Map<string, Entry>, flight: string, key: string, load: Loader): Promise<CachedAnswer> {
    const entry = map.get(key);
    if (entry) {
      const age = this.clock.now().getTime() - entry.loadedAt;
      if (age < this.maxAgeMs && age >= 0) {
        this.stats.hits++;
        if (age >= this.maxAgeMs / 2 && !this.loading.has(flight)) this.fill(map, flight, key, load).catch(() => {});
        return Promise.resolve(entry.answer);
      }
      this.drop(map, key, entry);
    }
    return this.loading.get(flight) ?? this.fill(map, flight, key, load);
  }

  private fill(map: Map<string, Entry>, flight: string, key: string, load: Loader): Promise<CachedAnswer> {
    const epoch = this.epoch;
    const loadedAt = this.clock.now().getTime();
    this.stats.loads++;
    const pending: Promise<CachedAnswer> = load()
      .then(({ answer, skillId }) => {
        if (this.epoch === epoch) this.keep(map, key, { answer, loadedAt, ...(skillId ? { skillId } : {}) });
        return answer;
      })
      .finally(() => {
        if (this.loading.get(flight) === pending) this.loading.delete(flight);
      });
    this.loading.set(flight, pending);
    return pending;
  }

  private keep(map: Map<string, Entry>, key: string, entry: Entry): void {
    const previous = map.get(key);
    if (previous) this.drop(map, key, previous);
    while (map.size >= this.maxEntries) {
      const [oldestKey, oldest] = map.entries().next().value as [string, Entry];
      this.drop(map, oldestKey, oldest);
    }
    map.set(key, entry);
    if (entry.skillId) this.slugOf.set(entry.skillId, key);
  }

  private drop(map: Map<string, Entry>, key: string, entry: Entry): void {
    map.delete(key);
    if (entry.skillId && this.slugOf.get(entry.skillId) === key) this.slugOf.delete(entry.skillId);
  }
}
