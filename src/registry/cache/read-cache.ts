import type { SkillView } from 'skill-market/registry';
import type { Clock } from '../../runtime/clock';
import type { ObservedFields } from '../modules/skills/view';
import { bodyAnswer, jsonAnswer, type CachedAnswer } from './http';

export type { CachedAnswer } from './http';

export interface ReadCacheOptions {
  /** The most a served counter may lag the database (READ_CACHE_MS). */
  maxAgeMs: number;
  clock: Clock;
  /** Reads the observed fields (counters, health) of these skills in one go; a skill missing is gone. */
  observe(ids: string[]): Promise<Map<string, ObservedFields>>;
  /** Listings kept before the oldest go (default 10,000: some 20 MB). */
  maxListings?: number;
  /** Search pages kept before the oldest go (default 2,000: each holds its built body, up to 100 listings). */
  maxPages?: number;
}

interface Listing {
  view: SkillView;
  answer: CachedAnswer;
  /** When the load of its content started. */
  loadedAt: number;
  /** When the read its counters came from started: they are at least this new. */
  checkedAt: number;
  usedAt: number;
}

interface Page {
  ids: string[];
  headers: Record<string, string>;
  loadedAt: number;
  /** How long its choice and order of skills stand: READ_CACHE_MS when ordered by counters. */
  maxAgeMs: number;
  built: { version: number; answer: CachedAnswer };
}

/**
 * How long content (a listing, a search page's choice and order) is kept even without a change
 * notice: the bound should a notice be missed, or a read replica still lag when it arrived.
 */
const CONTENT_MAX_AGE_MS = 10_000;
/** A listing nobody asked for this long is no longer refreshed, but dropped. */
const IDLE_MS = 60_000;

/**
 * An in-process cache of public discovery answers: skill listings by slug, and search pages as
 * lists of skills whose listings are shared with the listing cache.
 *
 * - A listing's content is kept until a change notification (another instance's write) or this
 *   instance's own write drops it, and at most CONTENT_MAX_AGE_MS. Its observed fields (counters, health) change without notice:
 *   they are re-read for every listing in use, in one statement, once they are half `maxAgeMs`
 *   old (served meanwhile), and a listing whose counters are `maxAgeMs` old is not served before
 *   that re-read. So counters lag at most `maxAgeMs`, at the cost of one statement per half
 *   `maxAgeMs` whatever the number of listings and requests.
 * - A search page keeps which skills it lists, in order, until a change drops every page, and
 *   at most CONTENT_MAX_AGE_MS (`maxAgeMs` when ordered by counters); its body is built from
 *   the current listings.
 * - A value of content only (a Bazaar catalogue page, a count) is kept until any change drops
 *   every one, and at most CONTENT_MAX_AGE_MS.
 * - One load per key at a time; a load that overlaps a change is answered to its waiters but not
 *   kept. Not-found and errors are never kept.
 */
export class ReadCache {
  private readonly listings = new Map<string, Listing>();
  private readonly idOf = new Map<string, string>();
  private readonly pages = new Map<string, Page>();
  private readonly loading = new Map<string, Promise<unknown>>();
  /** Values of content only (see `remember`), by key. */
  private readonly remembered = new Map<string, { value: unknown; loadedAt: number }>();
  private refreshing: Promise<void> | undefined;
  /** Bumped by every change notice: loads that started before one are not kept. */
  private epoch = 0;
  /** Bumped whenever a listing's answer changes or goes: pages rebuild their body then. */
  private version = 0;
  constructor(private readonly options: ReadCacheOptions) {}

  /** The listing of `slug`. */
  async listing(slug: string, load: () => Promise<SkillView>): Promise<CachedAnswer> {
    const id = this.idOf.get(slug);
    const cached = id === undefined ? undefined : this.listings.get(id);
    if (cached && this.young(cached) && (await this.current([cached]))) {
      return cached.answer;
    }
    return this.flight(`l:${slug}`, async (keep) => {
      const view = await load();
      const answer = jsonAnswer(view);
      keep((at) => this.keepListing(view, answer, at));
      return answer;
    });
  }

  /** The search page for `key` (the path and query); `byCounters` when its order depends on counters. */
  async search(
    key: string,
    byCounters: boolean,
    load: () => Promise<{ skills: SkillView[]; headers: Record<string, string> }>,
  ): Promise<CachedAnswer> {
    const page = this.pages.get(key);
    if (page) {
      const age = this.now() - page.loadedAt;
      const listed = page.ids.map((id) => this.listings.get(id));
      if (
        age >= 0 &&
        age < page.maxAgeMs &&
        listed.every((l): l is Listing => l !== undefined && this.young(l)) &&
        (await this.current(listed))
      ) {
        if (page.built.version !== this.version) {
          page.built = { version: this.version, answer: bodyAnswer(`[${listed.map((l) => l.answer.body).join(',')}]`, page.headers) };
        }
        return page.built.answer;
      }
    }
    return this.flight(`s:${key}`, async (keep) => {
      const { skills, headers } = await load();
      const answer = jsonAnswer(skills, headers);
      keep((at) => {
        for (const view of skills) this.keepListing(view, jsonAnswer(view), at);
        this.pages.delete(key);
        this.bound(this.pages, this.options.maxPages ?? 2_000);
        this.pages.set(key, {
          ids: skills.map((s) => s.id),
          headers,
          loadedAt: at,
          maxAgeMs: byCounters ? this.options.maxAgeMs : Math.max(this.options.maxAgeMs, CONTENT_MAX_AGE_MS),
          built: { version: this.version, answer },
        });
      });
      return answer;
    });
  }

  /**
   * A value built from listings' content and not their counters (a Bazaar catalogue page, the
   * number of skills a filter matches), kept under `key` until any change, and at most
   * CONTENT_MAX_AGE_MS: the bound, too, for what changes without notice (a creator's profile).
   */
  async remember<T>(key: string, load: () => Promise<T>): Promise<T> {
    const kept = this.remembered.get(key);
    const age = kept ? this.now() - kept.loadedAt : -1;
    if (kept && age >= 0 && age < Math.max(this.options.maxAgeMs, CONTENT_MAX_AGE_MS)) return kept.value as T;
    return this.flight(`r:${key}`, async (keep) => {
      const value = await load();
      keep((at) => {
        this.remembered.delete(key);
        this.bound(this.remembered, this.options.maxPages ?? 2_000);
        this.remembered.set(key, { value, loadedAt: at });
      });
      return value;
    });
  }

  /** One skill's listing changed (content, membership or counters): its entry and every search page go. */
  skillChanged(skillId: string): void {
    this.changed();
    const listing = this.listings.get(skillId);
    if (listing) this.dropListing(listing);
    this.pages.clear();
    this.remembered.clear();
  }

  /** Anything may have changed (a group renamed, a server's health, a lost notification channel). */
  clear(): void {
    this.changed();
    this.listings.clear();
    this.idOf.clear();
    this.pages.clear();
    this.remembered.clear();
  }

  private changed(): void {
    this.epoch++;
    this.version++;
    this.loading.clear();
  }

  /** Whether a listing's content is within CONTENT_MAX_AGE_MS. */
  private young(listing: Listing): boolean {
    const age = this.now() - listing.loadedAt;
    return age >= 0 && age < Math.max(this.options.maxAgeMs, CONTENT_MAX_AGE_MS);
  }

  private now(): number {
    return this.options.clock.now().getTime();
  }

  /**
   * Whether these listings may be served: counters younger than maxAgeMs, re-read first when
   * not (and in the background past half of it). False if one went meanwhile.
   */
  private async current(listed: Listing[]): Promise<boolean> {
    if (listed.length === 0) return true;
    const now = this.now();
    const oldest = Math.min(...listed.map((l) => l.checkedAt));
    const age = now - oldest;
    for (const l of listed) l.usedAt = now;
    if (age >= 0 && age < this.options.maxAgeMs / 2) return true;
    if (age >= 0 && age < this.options.maxAgeMs) {
      this.refresh().catch(() => {});
      return true;
    }
    // A re-read already under way may have started before these were due: then one more.
    for (let round = 0; round < 2; round++) {
      await this.refresh();
      if (listed.some((l) => this.listings.get(l.view.id) !== l)) return false;
      const after = this.now();
      if (listed.every((l) => after - l.checkedAt < this.options.maxAgeMs)) return true;
    }
    return false;
  }

  /** Re-reads the counters of every listing in use that is half maxAgeMs old, in one statement; one at a time. */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      const startedAt = this.now();
      const due: Listing[] = [];
      for (const listing of this.listings.values()) {
        if (startedAt - listing.usedAt > IDLE_MS) this.dropListing(listing);
        else if (startedAt - listing.checkedAt >= this.options.maxAgeMs / 2 || startedAt < listing.checkedAt) due.push(listing);
      }
      if (due.length === 0) return;
      const observed = await this.options.observe(due.map((l) => l.view.id));
      for (const listing of due) {
        if (this.listings.get(listing.view.id) !== listing) continue; // changed meanwhile
        const fields = observed.get(listing.view.id);
        if (!fields) {
          this.dropListing(listing);
          continue;
        }
        if (!sameFields(listing.view, fields)) {
          listing.view = { ...listing.view, ...fields };
          listing.answer = jsonAnswer(listing.view);
          this.version++;
        }
        listing.checkedAt = startedAt;
      }
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** Runs `load` once per key at a time; `keep` stores its result unless a change came meanwhile. */
  private flight<T>(key: string, load: (keep: (store: (at: number) => void) => void) => Promise<T>): Promise<T> {
    const running = this.loading.get(key);
    if (running) return running as Promise<T>;
    const epoch = this.epoch;
    const startedAt = this.now();
    const pending: Promise<T> = load((store) => {
      if (this.epoch === epoch) store(startedAt);
    }).finally(() => {
      if (this.loading.get(key) === pending) this.loading.delete(key);
    });
    this.loading.set(key, pending);
    return pending;
  }

  private keepListing(view: SkillView, answer: CachedAnswer, at: number): void {
    const previous = this.listings.get(view.id);
    if (previous) {
      if (previous.checkedAt > at) return; // a newer read is already there
      this.dropListing(previous);
    }
    this.bound(this.listings, this.options.maxListings ?? 10_000, (l) => this.dropListing(l));
    this.listings.set(view.id, { view, answer, loadedAt: at, checkedAt: at, usedAt: at });
    this.idOf.set(view.slug, view.id);
    this.version++;
  }

  private dropListing(listing: Listing): void {
    this.listings.delete(listing.view.id);
    if (this.idOf.get(listing.view.slug) === listing.view.id) this.idOf.delete(listing.view.slug);
    this.version++;
  }

  /** Makes room for one more entry, dropping the oldest. */
  private bound<T>(map: Map<string, T>, max: number, drop: (value: T, key: string) => void = (_v, k) => map.delete(k)): void {
    while (map.size >= max) {
      const [key, value] = map.entries().next().value as [string, T];
      drop(value, key);
    }
  }
}

function sameFields(view: SkillView, fields: ObservedFields): boolean {
  for (const key of Object.keys(fields) as (keyof ObservedFields)[]) if (view[key] !== fields[key]) return false;
  return true;
}
