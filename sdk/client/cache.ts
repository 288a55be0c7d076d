/**
 * Skill listings reused for a short time, and concurrent lookups of one slug shared: a burst of
 * calls to one skill costs one registry request.
 */
export class ListingCache<T> {
  private readonly entries = new Map<string, { value: T; expires: number }>();
  private readonly inflight = new Map<string, Promise<T>>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached value (`cached: true`) or a new one from `load`; `fresh` skips the cache. */
  async get(key: string, fresh: boolean, load: () => Promise<T>): Promise<{ value: T; cached: boolean }> {
    const entry = this.entries.get(key);
    if (!fresh && entry && entry.expires > this.now()) return { value: entry.value, cached: true };
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = load().finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    const value = await pending;
    this.set(key, value);
    return { value, cached: false };
  }

  set(key: string, value: T): void {
    if (this.ttlMs <= 0) return;
    this.entries.set(key, { value, expires: this.now() + this.ttlMs });
    if (this.entries.size > 1000) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}
