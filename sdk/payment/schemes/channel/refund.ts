/**
 * A payer's money back from a payment channel, cooperatively (x402 `batch-settlement`'s refund):
 * the payer signs a zero-charge voucher (what the server charged so far) and sends it as a
 * `refund` payment to a skill of the channel's server, with GET as the reference client does (no
 * input to validate); the server claims what it charged and has the facilitator return the rest,
 * in one transaction the facilitator pays for. The payer needs no ETH. A server that charged less
 * than this client believes says so in a corrective 402 (its charge, proven by a voucher this
 * payer signed): the refund is signed again once for that charge. A server that does not
 * cooperate (gone, no longer offering the channel, or unable to have refunds signed) is answered
 * with the reason in plain words: the timed withdrawal on chain is then the payer's way out.
 */
import { getAddress, recoverTypedDataAddress } from 'viem';
import { type Answer, exchange, type FetchLike, isRecord } from '../../../http/exchange';
import {
  batchSettlementDomain,
  decodeBase64Json,
  encodeBase64Json,
  type Hex,
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  parseCaip2,
  voucherTypes,
  X_PAYMENT_RESPONSE_HEADER,
} from '../../../x402/index';
import type { ChannelRecord } from './store';
import type { PaymentSigner } from '../../signer';

/** What a cooperative refund came to. */
export type RefundOutcome =
  /** The facilitator returned `amount` to the payer in `transaction`; the channel holds `balance` after it, of which `charged` was the server's. */
  | { type: 'refunded'; amount: bigint; transaction: Hex; balance: bigint; charged: bigint }
  /** Nothing moved: `reason` is a code (the server's x402 reason, or this client's), `message` says it for people. */
  | { type: 'refused'; reason: string; message: string };

/** What {@link refundChannel} is given: the channel, who signs for it, and how to reach its server. */
export interface RefundOptions {
  /** The channel as this client knows it (its server's endpoint, its config, what was charged). */
  record: ChannelRecord;
  /** The channel's voucher signer (its `payerAuthorizer`: the paying wallet, or the key that signed its vouchers). */
  signer: PaymentSigner;
  fetch: FetchLike;
  /** Part of what is left; default all of it. */
  amount?: bigint;
  /** Per request, ms; default 30 000 (the refund waits for its transaction). */
  timeoutMs?: number;
}

const MISMATCH = 'invalid_batch_settlement_evm_cumulative_amount_mismatch';

/** What a server's refusal means for the payer, in plain words. */
const PLAIN: Record<string, string> = {
  invalid_batch_settlement_evm_refund_receiver_consent_required:
    'the server cannot have refunds signed: its facilitator needs a key bound to its payout address',
  invalid_batch_settlement_evm_refund_no_balance: 'nothing is left in the channel to give back',
  invalid_batch_settlement_evm_refund_amount_invalid: 'that is more than is left in the channel',
  invalid_batch_settlement_evm_voucher_signature: 'the server did not accept the signature (is this the wallet that opened the channel?)',
};

/**
 * Asks the channel's server for the unspent deposit back.
 *
 * @example
 * const outcome = await refundChannel({ record, signer: toPaymentSigner(key), fetch });
 * if (outcome.type === 'refunded') console.log(`got ${outcome.amount} back in ${outcome.transaction}`);
 */
export async function refundChannel(options: RefundOptions): Promise<RefundOutcome> {
  const { record, signer } = options;
  if (!record.endpoint) return refused('no_endpoint', 'this client does not know which server the channel pays');
  if (getAddress(signer.address) !== getAddress(record.config.payerAuthorizer))
    return refused('not_payer', `the channel's vouchers are signed by ${record.config.payerAuthorizer}, not by ${signer.address}`);
  const send = (headers: Record<string, string> = {}) =>
    exchange(
      record.endpoint!,
      { method: 'GET', headers: { accept: 'application/json', ...headers } },
      {
        fetch: options.fetch,
        timeoutMs: options.timeoutMs ?? 30_000,
        retries: 0,
        what: record.endpoint!,
      },
    );
  let probe: Answer;
  try {
    probe = await send();
  } catch (error) {
    return refused('unreachable', `the server at ${record.endpoint} did not answer: ${(error as Error).message}`);
  }
  const offer = channelOffer(probe, record);
  if (!offer) return refused('no_offer', `the server at ${record.endpoint} no longer offers this channel`);

  let charged = BigInt(record.charged);
  for (let attempt = 0; attempt < 2; attempt++) {
    const payment = await refundPayment(signer, record, offer, charged, options.amount);
    let answer: Answer;
    try {
      answer = await send({ 'PAYMENT-SIGNATURE': payment });
    } catch (error) {
      // The refund may have been sent: the channel's balance on chain says (market channels).
      return refused(
        'no_answer',
        `the server did not answer the refund: ${(error as Error).message}; check the channel before asking again`,
      );
    }
    if (answer.status === 200) return refundedBy(answer, record);
    if (answer.status !== 402) return refused('server_error', `the server answered ${answer.status} to the refund`);
    const terms = termsOf(answer);
    const reason = typeof terms?.error === 'string' ? terms.error : 'refused';
    if (reason !== MISMATCH || attempt > 0) return refused(reason, PLAIN[reason] ?? `the server refused the refund: ${reason}`);
    const proven = await provenCharge(terms, record);
    if (proven === undefined) return refused(reason, 'the server answered a channel state this client cannot verify');
    charged = proven;
  }
  return refused(MISMATCH, 'the server and this client disagree on what was charged');
}

const refused = (reason: string, message: string): RefundOutcome => ({ type: 'refused', reason, message });

/** The decoded PAYMENT-REQUIRED of a 402, if readable. */
function termsOf(answer: Answer): Record<string, unknown> | undefined {
  const header = answer.headers.get(PAYMENT_REQUIRED_HEADER);
  if (!header) return undefined;
  try {
    const decoded = decodeBase64Json(header, 'malformed_payment', 'payment terms');
    return isRecord(decoded) ? decoded : undefined;
  } catch {
    return undefined;
  }
}

/** The server's `batch-settlement` offer for this channel's config, from its 402. */
function channelOffer(answer: Answer, record: ChannelRecord): Record<string, unknown> | undefined {
  const accepts = termsOf(answer)?.accepts;
  if (!Array.isArray(accepts)) return undefined;
  const same = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();
  return accepts.find((offer): offer is Record<string, unknown> => {
    if (!isRecord(offer) || offer.scheme !== 'batch-settlement' || !isRecord(offer.extra)) return false;
    const { config } = record;
    return (
      same(offer.payTo, config.receiver) &&
      same(offer.asset, config.token) &&
      same(offer.extra.receiverAuthorizer, config.receiverAuthorizer) &&
      offer.extra.withdrawDelay === config.withdrawDelay
    );
  });
}

/** The refund payment header: the zero-charge voucher for `charged`, and the amount when part of the rest. */
async function refundPayment(
  signer: PaymentSigner,
  record: ChannelRecord,
  offer: Record<string, unknown>,
  charged: bigint,
  amount: bigint | undefined,
): Promise<string> {
  const signature = await signer.signTypedData({
    domain: batchSettlementDomain(parseCaip2(record.network)),
    types: voucherTypes,
    primaryType: 'Voucher',
    message: { channelId: record.channelId, maxClaimableAmount: charged },
  });
  return encodeBase64Json({
    x402Version: 2,
    accepted: offer,
    payload: {
      type: 'refund',
      channelConfig: record.config,
      voucher: { channelId: record.channelId, maxClaimableAmount: charged.toString(), signature },
      ...(amount === undefined ? {} : { amount: amount.toString() }),
    },
  });
}

/** The server's charge in a corrective 402, when a voucher this channel's signer signed proves it. */
async function provenCharge(terms: Record<string, unknown> | undefined, record: ChannelRecord): Promise<bigint | undefined> {
  const offer = Array.isArray(terms?.accepts) ? terms.accepts.find((a) => isRecord(a) && a.scheme === 'batch-settlement') : undefined;
  const extra = isRecord(offer) && isRecord(offer.extra) ? offer.extra : {};
  const state = isRecord(extra.channelState) ? extra.channelState : {};
  const voucher = isRecord(extra.voucherState) ? extra.voucherState : {};
  const digits = (v: unknown): v is string => typeof v === 'string' && /^\d{1,39}$/.test(v);
  if (!digits(state.chargedCumulativeAmount) || !digits(voucher.signedMaxClaimable) || typeof voucher.signature !== 'string')
    return undefined;
  const charged = BigInt(state.chargedCumulativeAmount);
  const max = BigInt(voucher.signedMaxClaimable);
  const signer = await recoverTypedDataAddress({
    domain: batchSettlementDomain(parseCaip2(record.network)),
    types: voucherTypes,
    primaryType: 'Voucher',
    message: { channelId: record.channelId, maxClaimableAmount: max },
    signature: voucher.signature as Hex,
  }).catch(() => undefined);
  return signer && getAddress(signer) === getAddress(record.config.payerAuthorizer) && charged <= max ? charged : undefined;
}

/** The outcome of a 200 to a refund: its `PAYMENT-RESPONSE`. */
function refundedBy(answer: Answer, record: ChannelRecord): RefundOutcome {
  const raw = answer.headers.get(PAYMENT_RESPONSE_HEADER) ?? answer.headers.get(X_PAYMENT_RESPONSE_HEADER);
  let response: unknown;
  try {
    response = raw === null ? undefined : decodeBase64Json(raw, 'malformed_settle_response', 'receipt');
  } catch {
    response = undefined;
  }
  if (!isRecord(response) || response.success !== true || typeof response.transaction !== 'string' || typeof response.amount !== 'string')
    return refused('no_receipt', 'the server answered the refund without a readable receipt; check the channel on chain');
  const state = isRecord(response.extra) && isRecord(response.extra.channelState) ? response.extra.channelState : {};
  const balance = typeof state.balance === 'string' ? BigInt(state.balance) : BigInt(record.balance) - BigInt(response.amount);
  const charged = typeof state.chargedCumulativeAmount === 'string' ? BigInt(state.chargedCumulativeAmount) : BigInt(record.charged);
  return { type: 'refunded', amount: BigInt(response.amount), transaction: response.transaction as Hex, balance, charged };
}
