import { DatabaseUnavailableError } from './deadline';

/** Socket failures postgres.js reports as `code`. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
]);
/**
 * SQLSTATEs of a server that is going away or full (shutdown, crash, starting up, too many
 * connections), or of a statement that lost a race it may win when tried again (canceled by its
 * deadline, a deadlock victim, a serialization failure, a lock not available).
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300', '57014', '40P01', '40001', '55P03']);

/**
 * Whether `error` (or what it wraps: drizzle wraps driver errors in `cause`) says the database
 * cannot be reached right now — the client then gets 503 with Retry-After, not a 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof DatabaseUnavailableError) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (CONNECTION_CODES.has(code) || UNAVAILABLE_STATES.has(code) || code.startsWith('08'))) return true;
    if (e.message === 'PGlite is closed') return true;
  }
  return false;
}
