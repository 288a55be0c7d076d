/**
 * What every scheme's checks and sends share: a refusal (a reason plus a short message), and the
 * text of a chain error fit for an answer or a log line.
 */
import { BaseError } from 'viem';

/** A failed check: a facilitator reason plus a short human message. */
export interface Rejection {
  reason: string;
  message: string;
}

/** The revert reason, or the shortest useful text of an error (never a stack). */
export function revertText(error: unknown): string {
  if (error instanceof BaseError) return (error.details || error.shortMessage).slice(0, 300);
  return (error instanceof Error ? error.message : String(error)).slice(0, 300);
}

/**
 * An error fit for a log line: name and short text only. viem's full messages repeat the request
 * (calldata holding the payer's signature, RPC URLs that may carry API keys), so never log those.
 */
export function safeError(error: unknown): { name: string; message: string } {
  return { name: error instanceof Error ? error.name : typeof error, message: revertText(error) };
}
