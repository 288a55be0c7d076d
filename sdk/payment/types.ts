/**
 * The public data shapes of a paid call: what it returns, how it pays, the tokens it may pay in,
 * and what the budget holds.
 */
import type { ReceiptCheck } from './receipt-check';
import type { Address, Hex } from 'viem';
import type { Skill } from '../registry/read';
import type { Caip2Network } from '../x402/index';

/** What a paid call cost and where the money went. */
export interface PaymentReceipt {
  skillId: string;
  slug: string;
  /** Settlement transaction hash (a channel's `deposit`); null when the server sent no valid settlement receipt, and for a voucher. */
  transaction: Hex | null;
  /** What this call was charged: atomic units of `asset` (micro-USDC for USDC), e.g. `"1000"`. */
  amount: string;
  /** What the call deposited into its payment channel first (refundable escrow, not part of `amount`), atomic units; `transaction` is then the deposit's. */
  deposit?: string;
  /** The listed price, e.g. `"$0.001"`. */
  price: string;
  /** Present when the listing prices by use: `price` is the most a call costs, `amount` what this one used. */
  usageBased?: true;
  payTo: Address;
  network: Caip2Network;
  asset: Address;
  payer: Address;
  /** The EIP-3009 authorization nonce (single use on chain); for a channel voucher, its EIP-712 digest. */
  nonce: Hex;
  /** The x402 scheme it was paid with: `exact` (a transfer) or `batch-settlement` (a payment channel). */
  scheme: string;
  /** The payment channel, for `batch-settlement`. */
  channelId?: Hex;
  /**
   * For `batch-settlement`: the channel's cumulative charge after this call, atomic units (as the
   * server confirmed it; what the voucher allowed when it sent no confirmation).
   */
  chargedCumulativeAmount?: string;
  /**
   * The skill server's signed receipt of this call (`X-Receipt`), as checked against the listing's
   * `receiptSigner`, the body received and this payment; undefined when the server signs none (or
   * the listing names no signer).
   */
  signed?: ReceiptCheck;
}

/** Result of {@link SkillMarket.callWithReceipt}. */
export interface CallResult<T = unknown> {
  /** The handler's result (the `result` of the skill server's success body). */
  result: T;
  /** The payment; null when the server served the call without asking for payment. */
  receipt: PaymentReceipt | null;
  /** The listing the call was checked against. */
  skill: Skill;
  /** True for a free trial call (the wallet signed the skill's sign-in; nothing was paid). */
  trial?: true;
  /** After a free trial call: the free calls the wallet has left in the period, as the server said. */
  trialCallsLeft?: number;
}

/**
 * How a call pays. `standard`: POST without payment, read the 402 terms, check them, sign, POST
 * again (two round trips). `fast`: sign from the registry listing and send the proof with the
 * first POST (one round trip); a 402 with other terms falls back to the standard flow, re-signing
 * with the same EIP-3009 nonce so at most one of the two authorizations can ever settle.
 */
export type PaymentMode = 'standard' | 'fast';

/** A token the client may pay in besides the network's built-in USDC (e.g. a test token). */
export interface AllowedAsset {
  /** CAIP-2 network, e.g. `eip155:84532`. */
  network: string;
  address: string;
  /** EIP-712 domain name; omitted: the server's `extra.name` is used. */
  name?: string;
  /** EIP-712 domain version; omitted: the server's `extra.version` is used. */
  version?: string;
  /** Token decimals; default 6 (listings are priced in micro-USDC). */
  decimals?: number;
}

/** Budget state in atomic micro-USDC. */
export interface SpendingSnapshot {
  /** Settled or possibly settled. */
  spent: bigint;
  /** Held by calls in flight. */
  reserved: bigint;
  budget: bigint | undefined;
  /** `budget - spent - reserved`, undefined without a budget. */
  remaining: bigint | undefined;
}
