/**
 * What the skill server writes about itself. Any object with `info`, `warn` and `error` taking a
 * message and optional fields fits (the CLI passes its JSON logger); the default writes readable
 * lines to the console.
 */
export interface CreatorLogger {
  /** What happened: started, registered, settled. `fields` hold the details. */
  info(message: string, fields?: Record<string, unknown>): void;
  /** Something to look at; the server keeps serving. `fields` hold the details. */
  warn(message: string, fields?: Record<string, unknown>): void;
  /** A call or a background task failed. `fields` hold the details. */
  error(message: string, fields?: Record<string, unknown>): void;
}

function line(message: string, fields?: Record<string, unknown>): string {
  if (!fields) return message;
  const parts = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : stringify(value)}`);
  return parts.length ? `${message} (${parts.join(', ')})` : message;
}

function stringify(value: unknown): string {
  if (value instanceof Error) return value.message;
  try {
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  } catch {
    return String(value);
  }
}

/** Console lines prefixed with `[skill-market]`. */
export const consoleLogger: CreatorLogger = {
  info: (message, fields) => console.info(`[skill-market] ${line(message, fields)}`),
  warn: (message, fields) => console.warn(`[skill-market] ${line(message, fields)}`),
  error: (message, fields) => console.error(`[skill-market] ${line(message, fields)}`),
};

/** Runs a user callback without letting it break anything: sync throws and async rejections are logged. */
export function callSafely(logger: CreatorLogger, what: string, callback: () => unknown): void {
  try {
    const outcome = callback();
    if (outcome && typeof (outcome as Promise<unknown>).then === 'function') {
      (outcome as Promise<unknown>).then(undefined, (error: unknown) => logger.warn(`${what} failed`, { error: errorText(error) }));
    }
  } catch (error) {
    logger.warn(`${what} failed`, { error: errorText(error) });
  }
}

/** The message of anything thrown. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  return stringify(error);
}
