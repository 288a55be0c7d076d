import { AppError } from '../../http';
import { isUuid } from './uuid';

/**
 * Keyset cursors over (order value, id), in the format every paged list issues (`GET /skills`, usage history, reviews): base64url JSON
 * `[value, id]`, opaque to clients. Decoding checks the id is a UUID and `accepts` the value (that
 * it casts to the order's type), so a forged cursor is a 400, never a database error.
 */
export function encodeCursor(value: string, id: string): string {
  return Buffer.from(JSON.stringify([value, id])).toString('base64url');
}

export function decodeCursor(cursor: string, accepts: (value: string) => boolean): [string, string] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && isUuid(parsed[1]) && accepts(parsed[0])) {
      return [parsed[0], parsed[1]];
    }
  } catch {
    // reported below
  }
  throw new AppError('VALIDATION', 'Invalid request: field "cursor": not a cursor this registry issued');
}

/** An instant exactly as `Date.toISOString()` writes it (what a timestamp cursor carries). */
export function isIsoInstant(value: string): boolean {
  return (
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) &&
    !Number.isNaN(Date.parse(value)) &&
    new Date(value).toISOString() === value
  );
}
