import type { Address, Hex } from 'viem';
import type { SettleResponse } from 'skill-market/x402';

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

/**
 * What became of one authorization, answered by `GET /settlements/:network/:asset/:payer/:nonce`:
 * `unsettled` (verified, no settlement asked for yet: a settle may still be sent), `pending` (a
 * settlement is under way or its transaction awaits a final status), `settled` (the transfer is
 * on chain) or `failed` (it did not and will not happen through this facilitator; `reason` says why).
 * A resource server that lost the answer of `/settle` asks this to learn the outcome.
 */
export interface SettlementStatus {
  status: 'unsettled' | 'pending' | 'settled' | 'failed';
  network: string;
  payer: Address;
  /** The settlement transaction, when one was sent; `""` otherwise. */
  transaction: Hex | '';
  reason?: string;
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
