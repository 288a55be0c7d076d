import type { Logger } from '../log';

/**
 * On SIGTERM or SIGINT runs `stop` once and exits 0; exits 1 if stopping fails, and forces the
 * exit after `graceMs` so a stuck connection can never keep the process alive.
 */
export function exitOnSignal(stop: () => Promise<void>, logger: Logger, graceMs = 1500): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    const force = setTimeout(() => {
      logger.warn('shutdown took too long; exiting', { graceMs });
      process.exit(0);
    }, graceMs);
    stop().then(
      () => {
        clearTimeout(force);
        process.exit(0);
      },
      (error: unknown) => {
        logger.error('shutdown failed', { error });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
