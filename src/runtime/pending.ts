/**
 * Work a server starts off a request's path (a key's lastUsedAt, an access-log line written after
 * the answer): tracked, so that a test or a shutdown awaits it instead of guessing how long it takes.
 */
export interface PendingWork {
  /** Tracks `work` until it settles and hands it back; its rejection stays the caller's to handle. */
  track<T>(work: Promise<T>): Promise<T>;
  /** Resolves once everything tracked so far, and anything tracked meanwhile, has settled. */
  settled(): Promise<void>;
}

export function pendingWork(): PendingWork {
  const running = new Set<Promise<void>>();
  return {
    track(work) {
      const done: Promise<void> = work.then(
        () => {},
        () => {},
      );
      running.add(done);
      void done.then(() => running.delete(done));
      return work;
    },
    async settled() {
      while (running.size > 0) await Promise.all(running);
    },
  };
}
