import type { Address, Hex } from 'viem';
import type { SettleResponse } from '../../sdk/x402/index';

export type { SettleResponse };

/** Answer of `POST /verify` (standard x402 shape). */
export interface VerifyResponse {
  isValid: boolean;
  invalidReason?: string;
  invalidMessage?: string;
  payer?: Address;
}

/** One (version, scheme, network) this facilitator handles. */
export interface SupportedKind {
  x402Version: 1 | 2;
  scheme: 'exact';
  network: string;
}

/** Answer of `GET /supported` (standard x402 shape). */
export interface SupportedResponse {
  kinds: SupportedKind[];
  extensions: string[];
  signers: Record<string, string[]>;
}

export type ReceiptStatus = 'pending' | 'confirmed' | 'reverted' | 'dropped';

/** A settlement transaction as stored, answered by `GET /receipts/:tx`. Amounts in atomic units. */
export interface PaymentReceipt {
  transaction: Hex;
  status: ReceiptStatus;
  network: string;
  asset: Address;
  payer: Address;
  payee: Address;
  amount: string;
  relayer: Address;
  blockNumber: number | null;
  error: string | null;
  submittedAt: string;
  updatedAt: string;
  finalizedAt: string | null;
}

/** A source of the current time, injected so tests control validity windows. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Unix seconds of a clock reading. */
export function unixSeconds(clock: Clock): number {
  return Math.floor(clock.now().getTime() / 1000);
}
