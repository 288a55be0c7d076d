/**
 * What the channel flow reads off the wire: the client's `batch-settlement` payment (deposit,
 * voucher or refund: the fields the server decides on, the original kept for the facilitator) and
 * the channel snapshot a facilitator returns in `/verify` `extra` and `/settle` `extra.channelState`.
 */
import { getAddress, isAddress } from 'viem';
import { type ChannelConfig, decodeBase64Json, type Hex, MAX_WITHDRAW_DELAY, MIN_WITHDRAW_DELAY } from '../../x402/index';
import { BYTES32_PATTERN } from '../../x402/patterns';

/** The channel payload kinds a client sends. */
export type ChannelPaymentType = 'deposit' | 'voucher' | 'refund';

/** A client's channel payment, as the server decides on it. */
export interface ChannelPayment {
  type: ChannelPaymentType;
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

const UINT = /^(0|[1-9][0-9]{0,38})$/;
const HEX = /^0x([0-9a-fA-F]{2})+$/;
const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
const uint = (value: unknown): bigint | undefined => (typeof value === 'string' && UINT.test(value) ? BigInt(value) : undefined);

/** Whether a PAYMENT-SIGNATURE / X-Payment value is a `batch-settlement` payment (cheap: no validation). */
export function channelHeader(headers: Headers): string | undefined {
  const value = headers.get('PAYMENT-SIGNATURE') ?? headers.get('X-PAYMENT');
  if (!value) return undefined;
  try {
    const decoded = record(decodeBase64Json(value, 'malformed_payment', 'payment header'));
    return record(decoded?.accepted)?.scheme === 'batch-settlement' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The payment in a header value, or the reason it is malformed (an x402 reason string). */
export function readChannelPayment(header: string): ChannelPayment | { error: string } {
  const original = record(decodeBase64Json(header, 'malformed_payment', 'payment header'));
  const accepted = record(original?.accepted);
  const payload = record(original?.payload);
  const type = payload?.type;
  if (original?.x402Version !== 2 || !accepted || !payload) return { error: 'invalid_batch_settlement_evm_payload_type' };
  if (type !== 'deposit' && type !== 'voucher' && type !== 'refund') return { error: 'invalid_batch_settlement_evm_payload_type' };
  const malformed = { error: `invalid_batch_settlement_evm_${type}_payload` };
  const config = readConfig(payload.channelConfig);
  const voucher = record(payload.voucher);
  const maxClaimableAmount = uint(voucher?.maxClaimableAmount);
  const channelId = voucher?.channelId;
  const signature = voucher?.signature;
  if (!config || maxClaimableAmount === undefined || typeof channelId !== 'string' || !BYTES32_PATTERN.test(channelId)) return malformed;
  if (typeof signature !== 'string' || !HEX.test(signature) || signature.length > 8192) return malformed;
  const payment: ChannelPayment = {
    type,
    accepted,
    config,
    channelId: channelId.toLowerCase() as Hex,
    maxClaimableAmount,
    signature: signature as Hex,
    original,
  };
  if (type === 'deposit') {
    const amount = uint(record(payload.deposit)?.amount);
    if (amount === undefined || amount === 0n) return malformed;
    payment.depositAmount = amount;
  }
  if (type === 'refund' && payload.amount !== undefined) {
    const amount = uint(payload.amount);
    if (amount === undefined || amount === 0n) return { error: 'invalid_batch_settlement_evm_refund_amount_invalid' };
    payment.refundAmount = amount;
  }
  return payment;
}

function readConfig(value: unknown): ChannelConfig | undefined {
  const c = record(value);
  if (!c) return undefined;
  const addresses = ['payer', 'payerAuthorizer', 'receiver', 'receiverAuthorizer', 'token'] as const;
  if (!addresses.every((k) => typeof c[k] === 'string' && isAddress(c[k] as string, { strict: false }))) return undefined;
  const delay = c.withdrawDelay;
  if (typeof delay !== 'number' || !Number.isInteger(delay) || delay < MIN_WITHDRAW_DELAY || delay > MAX_WITHDRAW_DELAY) return undefined;
  if (typeof c.salt !== 'string' || !BYTES32_PATTERN.test(c.salt)) return undefined;
  const [payer, payerAuthorizer, receiver, receiverAuthorizer, token] = addresses.map((k) => getAddress(c[k] as string));
  return {
    payer: payer!,
    payerAuthorizer: payerAuthorizer!,
    receiver: receiver!,
    receiverAuthorizer: receiverAuthorizer!,
    token: token!,
    withdrawDelay: delay,
    salt: c.salt as Hex,
  };
}

/** The snapshot in a facilitator's `/verify` `extra` or `/settle` `extra.channelState`; undefined when absent or malformed. */
export function readSnapshot(value: unknown): ChannelSnapshot | undefined {
  const s = record(value);
  const balance = uint(s?.balance);
  const totalClaimed = uint(s?.totalClaimed);
  const refundNonce = uint(s?.refundNonce ?? '0');
  const requested = s?.withdrawRequestedAt ?? 0;
  const withdrawRequestedAt = typeof requested === 'string' ? Number(uint(requested) ?? Number.NaN) : requested;
  if (balance === undefined || totalClaimed === undefined || refundNonce === undefined) return undefined;
  if (typeof withdrawRequestedAt !== 'number' || !Number.isSafeInteger(withdrawRequestedAt) || withdrawRequestedAt < 0) return undefined;
  return { balance, totalClaimed, withdrawRequestedAt, refundNonce };
}
