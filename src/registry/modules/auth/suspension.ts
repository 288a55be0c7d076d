/**
 * A suspended account (the operators' decision, with a reason) may sign in, read, sign out and take
 * access away (DELETE: revoke a key, a wallet, a webhook); every other write, by session or API
 * key, answers 403 with the reason.
 */
import { AppError } from '../../../http';

/** Why and since when the account is suspended; null when it is not. */
export type Suspension = { reason: string; at: string } | null;

export function suspensionOf(row: { suspendedAt: Date | null; suspendedReason: string | null }): Suspension {
  return row.suspendedAt ? { reason: row.suspendedReason ?? '', at: row.suspendedAt.toISOString() } : null;
}

/** Methods that never add nor change what the account offers. */
const ALLOWED_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE']);
/** Writes a suspended account may still make: ending its own session. */
const ALLOWED_WRITES = new Set(['POST /auth/logout']);

/** Throws 403 when a suspended account makes a write it may not. */
export function checkSuspension(suspension: Suspension, method: string, path: string): void {
  if (suspension === null || ALLOWED_METHODS.has(method) || ALLOWED_WRITES.has(`${method} ${path}`)) return;
  throw new AppError('FORBIDDEN', `This account is suspended by the marketplace’s operators: ${suspension.reason}`, {
    suspended: true,
    reason: suspension.reason,
    suspendedAt: suspension.at,
  });
}
