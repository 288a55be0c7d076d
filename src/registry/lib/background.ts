import type { Logger } from '../../log';

/** A unit of background work run in rounds: on demand, or on a timer between `start` and `stop`. */
export interface Rounds<T> {
  /** Runs a round now and resolves with its result; a round already running is joined, never doubled. */
  now(): Promise<T>;
  /** A round at once, then one `pauseMs` after each ends, until `stop()`. Never keeps the process alive. */
  start(): void;
  /** No further rounds; waits for the running one. */
  stop(): Promise<void>;
}

export function backgroundRounds<T>(run: () => Promise<T>, pauseMs: () => number, logger: Logger, name: string): Rounds<T> {
  let running: Promise<T> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = true;
  const now = () => (running ??= run().finally(() => (running = undefined)));
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
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running?.catch(() => {});
    },
  };
}
