/**
 * The `upto` scheme on EVM as the consumer pays it: one Permit2 authorization per call of at most
 * the price, which the server settles for what the call used (never more). The payer's wallet must
 * have approved Permit2 on the token once (an on-chain `approve` the payer sends; this client signs
 * typed data only): without it the server refuses the payment `permit2_allowance_required`, and the
 * error says so. Each authorization has a fresh random Permit2 nonce, single use on chain.
 */
import type { ChargeState } from '../../http/errors';
import type { Answer } from '../../http/exchange';
import {
  ADDRESS_PATTERN,
  decodeBase64Json,
  encodeBase64Json,
  PERMIT2_ADDRESS,
  randomPermit2Nonce,
  readSettleResponseHeader,
  sameAddress,
  UPTO_PROXY_ADDRESS,
  UPTO_SCHEME,
  uptoTypedData,
  type Address,
  type Hex,
  type UptoAuthorization,
  type UptoPayload,
} from '../../x402/index';
import type { PaymentScheme, RefusalVerdict, Settlement, SignedPayment, Terms } from '../scheme';
import { text, windowProblem } from '../checks';

/** Refusals after which the authorization may have been used (by this call's own earlier send), or its transfer is not seen yet. */
const MAYBE_SPENT = new Set(['permit2_invalid_nonce', 'settlement_pending']);
/** Failed settlements after which nothing moved: the facilitator's checks before it sends. */
const NOTHING_MOVED = new Set([
  'invalid_upto_evm_scheme',
  'invalid_upto_evm_network_mismatch',
  'invalid_permit2_spender',
  'invalid_permit2_recipient_mismatch',
  'upto_facilitator_mismatch',
  'permit2_deadline_expired',
  'permit2_not_yet_valid',
  'permit2_amount_mismatch',
  'permit2_token_mismatch',
  'invalid_permit2_signature',
  'permit2_allowance_required',
  'permit2_insufficient_balance',
  'permit2_simulation_failed',
  'invalid_upto_evm_payload_settlement_exceeds_amount',
]);

type UptoPayment = SignedPayment<UptoPayload>;

/**
 * The `upto` scheme (Permit2, a signed maximum) for {@link PaymentPipeline}; `SkillMarket` pays with
 * it when `payment: 'upto'`. The receipt's `amount` is what the server settled.
 *
 * @example const pipeline = new PaymentPipeline({ network: 'eip155:8453', schemes: [uptoScheme(), exactScheme()] });
 */
export function uptoScheme(): PaymentScheme<UptoPayload> {
  return {
    id: UPTO_SCHEME,
    maybeSpentReasons: MAYBE_SPENT,
    nothingMovedReasons: NOTHING_MOVED,

    accepts(candidate, { policy }) {
      const facilitator = (candidate.extra as Record<string, unknown> | undefined)?.facilitatorAddress;
      if (typeof facilitator !== 'string' || !ADDRESS_PATTERN.test(facilitator)) {
        return {
          ok: false,
          problem: { field: 'scheme', expected: 'upto terms naming extra.facilitatorAddress', actual: text(facilitator) },
          passed: 0,
        };
      }
      const window = windowProblem(candidate.maxTimeoutSeconds, policy);
      if (window) return { ok: false, problem: window, passed: 1 };
      return { ok: true, requirements: candidate as unknown as Terms };
    },

    async sign(terms, signer, { resource, previous }) {
      const r = terms.requirements;
      const authorization: UptoAuthorization = {
        from: signer.address,
        permitted: { token: r.asset, amount: r.amount },
        spender: UPTO_PROXY_ADDRESS,
        // Re-signed after a refusal: the same nonce, so at most one of the two can ever settle.
        nonce: previous?.payload.payload.permit2Authorization.nonce ?? randomPermit2Nonce(),
        deadline: String(Math.floor(Date.now() / 1000) + r.maxTimeoutSeconds),
        witness: { to: r.payTo, facilitator: r.extra?.facilitatorAddress as Address, validAfter: '0' },
      };
      const typed = uptoTypedData(authorization, Number(r.network.slice('eip155:'.length)));
      const signature = await signer.signTypedData(typed as never);
      const payload = { x402Version: 2 as const, accepted: r, payload: { signature, permit2Authorization: authorization }, resource };
      return {
        requirements: r,
        payload,
        proof: encodeBase64Json(payload),
        payer: signer.address,
        reference: `0x${BigInt(authorization.nonce).toString(16)}` as Hex,
      };
    },

    async onRefused(refusal): Promise<RefusalVerdict> {
      const fix = refusal.reason === undefined ? undefined : explain(refusal.reason);
      return fix ? { type: 'refused', why: `refused the payment: ${refusal.reason} (${fix})` } : { type: 'refused' };
    },

    explain,

    onAnswer(answer: Answer, payment: UptoPayment): Settlement {
      const read = readSettleResponseHeader(answer.headers);
      const settled =
        read.type === 'receipt' &&
        read.receipt.success &&
        read.receipt.network === payment.requirements.network &&
        (read.receipt.payer === undefined || sameAddress(read.receipt.payer, payment.payer));
      const charged = settled ? chargedOf(answer, BigInt(payment.requirements.amount)) : undefined;
      const transaction = settled && read.type === 'receipt' && read.receipt.transaction !== '' ? (read.receipt.transaction as Hex) : null;
      return { settled, transaction, ...(charged === undefined ? {} : { charged: charged.toString() }) };
    },

    async onChain(): Promise<{ charged: ChargeState; transaction: Hex | null }> {
      return { charged: 'unknown', transaction: null };
    },
  };
}

/** A reference server answers a missing Permit2 approval 412, ours 402: either way the payer's wallet must approve once. */
function explain(reason: string): string | undefined {
  return reason === 'permit2_allowance_required'
    ? `the paying wallet must approve Permit2 ${PERMIT2_ADDRESS} on the token once, an on-chain approve it sends itself`
    : undefined;
}

/** The `amount` of the receipt (what the server settled), when it is a whole number within the maximum. */
function chargedOf(answer: Answer, max: bigint): bigint | undefined {
  const header = answer.headers.get('PAYMENT-RESPONSE') ?? answer.headers.get('X-PAYMENT-RESPONSE');
  try {
    const amount = (decodeBase64Json(header ?? '', 'malformed_settle_response', 'payment response') as { amount?: unknown }).amount;
    if (typeof amount === 'string' && /^\d{1,78}$/.test(amount) && BigInt(amount) <= max) return BigInt(amount);
  } catch {
    // no readable amount: the receipt names the maximum
  }
  return undefined;
}
