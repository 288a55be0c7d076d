import type { Logger } from '../log';

/** A unit of background work run in rounds: on demand, or on a timer between `start` and `stop`. */
export interface Rounds<T> {
  /** Runs a round now and resolves with its result; a round already running is joined, never doubled. */
  now(): Promise<T>;
  /**
   * A round that starts after this call: now when none runs, else once the running one ends
   * (calls meanwhile share it), so it sees what was written before the call. None after `stop()`:
   * it then resolves with the last round's result.
   */
  next(): Promise<T>;
  /** A round at once, then one `pauseMs` after each ends, until `stop()`. Never keeps the process alive. */
  start(): void;
  /** No further rounds; waits for the running one. */
  stop(): Promise<void>;
}

export function backgroundRounds<T>(run: () => Promise<T>, pauseMs: () => number, logger: Logger, name: string): Rounds<T> {
  let running: Promise<T> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = true;
  let halted = false;
  let following: Promise<T> | undefined;
  const now = () => (running ??= run().finally(() => (running = undefined)));
  const next = (): Promise<T> => {
    if (running === undefined) return now();
    if (following === undefined) {
      following = running
        .catch(() => undefined as T)
        .then((last) => {
          following = undefined;
          return halted ? last : now();
        });
    }
    return following;
  };
  const schedule = (ms: number) => {
    timer = setTimeout(() => void tick(), ms);
    timer.unref?.();
  };
  const tick = async () => {
    try {
      await now();
    } catch (error) {
      logger.warn(`${name} round failed`, { error });
    }
    if (!stopped) schedule(pauseMs());
  };
  return {
    now,
    next,
    start() {
      if (!stopped) return;
      stopped = false;
      halted = false;
      schedule(0);
    },
    async stop() {
      stopped = true;
      halted = true;
      if (timer) clearTimeout(timer);
      await running?.catch(() => {});
      await following?.catch(() => {});
    },
  };
}
