/**
 * What the channel flow reads off the wire, through the SDK's batch-settlement codec: the client's
 * payment (deposit, voucher or refund: the fields the server decides on, the original kept for the
 * facilitator) and the channel snapshot a facilitator returns in `/verify` `extra` and `/settle`
 * `extra.channelState`.
 */
import {
  BATCH_SETTLEMENT_REASONS,
  type BatchClientPayload,
  BatchSettlementPayloadError,
  type ChannelConfig,
  type Hex,
  parseBatchClientPayload,
  parseChannelState,
} from '../../../x402/index';

/** A client's channel payment, as the server decides on it. */
export interface ChannelPayment {
  type: BatchClientPayload['type'];
  accepted: Record<string, unknown>;
  config: ChannelConfig;
  channelId: Hex;
  maxClaimableAmount: bigint;
  signature: Hex;
  /** deposit: the amount deposited. */
  depositAmount?: bigint;
  /** refund: the amount asked back (none: all that is left). */
  refundAmount?: bigint;
  /** The decoded PaymentPayload, forwarded to the facilitator as sent. */
  original: Record<string, unknown>;
}

/** The channel's state on chain as a facilitator reports it. */
export interface ChannelSnapshot {
  balance: bigint;
  totalClaimed: bigint;
  withdrawRequestedAt: number;
  refundNonce: bigint;
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** The payment in a decoded payment header, or the reason it is malformed (an x402 reason string). */
export function readChannelPayment(original: Record<string, unknown>): ChannelPayment | { error: string } {
  const accepted = record(original.accepted);
  if (original.x402Version !== 2 || !accepted) return { error: BATCH_SETTLEMENT_REASONS.payloadType };
  let payload: BatchClientPayload;
  try {
    payload = parseBatchClientPayload(original.payload);
  } catch (error) {
    return { error: error instanceof BatchSettlementPayloadError ? error.reason : BATCH_SETTLEMENT_REASONS.payloadType };
  }
  return {
    type: payload.type,
    accepted,
    config: payload.channelConfig,
    channelId: payload.voucher.channelId.toLowerCase() as Hex,
    maxClaimableAmount: BigInt(payload.voucher.maxClaimableAmount),
    signature: payload.voucher.signature,
    ...(payload.type === 'deposit' ? { depositAmount: BigInt(payload.deposit.amount) } : {}),
    ...(payload.type === 'refund' && payload.amount !== undefined ? { refundAmount: BigInt(payload.amount) } : {}),
    original,
  };
}

/** The snapshot in a facilitator's `/verify` `extra` or `/settle` `extra.channelState`; undefined when absent or malformed. */
export function readSnapshot(value: unknown): ChannelSnapshot | undefined {
  try {
    const s = parseChannelState(value);
    return {
      balance: BigInt(s.balance),
      totalClaimed: BigInt(s.totalClaimed),
      withdrawRequestedAt: s.withdrawRequestedAt,
      refundNonce: BigInt(s.refundNonce),
    };
  } catch {
    return undefined;
  }
}
