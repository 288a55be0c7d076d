/**
 * The `exact` scheme on EVM as the consumer pays it: one EIP-3009 TransferWithAuthorization of
 * exactly the price per call, settled by the server's facilitator. Its nonce is single use on
 * chain, which is what makes every resend safe: a re-signed payment (fast mode's fallback to the
 * server's terms) keeps the refused one's nonce, so at most one of the two can ever settle.
 */
import type { ChargeState } from '../../http/errors';
import type { Answer } from '../../http/exchange';
import type { Skill } from '../../registry/read';
import {
  encodePaymentPayload,
  FACILITATOR_REASONS,
  parsePaymentRequirements,
  readSettleResponseHeader,
  sameAddress,
  signAuthorization,
  type AuthorizationStateReader,
  type ExactEvmPayload,
  type Hex,
  type PaymentRequirements,
} from '../../x402/index';
import { amountIn, defaultAsset } from '../assets';
import type { ChosenTerms, PaymentScheme, Refusal, RefusalVerdict, Settlement, SignedPayment, Terms, TermsPolicy } from '../scheme';
import { malformedTerms, tokenDomainProblem, windowProblem } from '../checks';

/** The marketplace's documented window, used for terms built from a listing. */
const LISTING_TIMEOUT_SECONDS = 60;

/** 402 reasons that do not mean "nothing moved": the nonce was used (by this call's own earlier send), or the transfer is not seen yet. */
const MAYBE_SPENT = new Set<string>([FACILITATOR_REASONS.nonceAlreadyUsed, FACILITATOR_REASONS.settlementPending]);

/**
 * Reasons of a failed settlement after which nothing moved: the facilitator's checks before it
 * sends a transfer, and a sent transfer that reverted. Any other failed settlement (a transport
 * error between server and facilitator, an unexpected error) may have sent the transfer.
 */
const NOTHING_MOVED = new Set<string>([
  ...Object.values(FACILITATOR_REASONS).filter(
    (r) =>
      r !== FACILITATOR_REASONS.nonceAlreadyUsed &&
      r !== FACILITATOR_REASONS.settlementPending &&
      r !== FACILITATOR_REASONS.transactionFailed,
  ),
  'invalid_transaction_state',
  'insufficient_funds',
]);

/** Options of {@link exactScheme}. */
export interface ExactSchemeOptions {
  /** The chain, to tell whether an authorization was used when a server's answer cannot. */
  chain?: AuthorizationStateReader;
}

type ExactPayment = SignedPayment<ExactEvmPayload>;

/**
 * The `exact` scheme (EIP-3009) for {@link PaymentPipeline}: the one SkillMarket pays with.
 *
 * @example
 * const pipeline = new PaymentPipeline({
 *   network: 'eip155:8453',
 *   schemes: [exactScheme({ chain: createAuthorizationStateReader('https://mainnet.base.org') })],
 * });
 */
export function exactScheme(options: ExactSchemeOptions = {}): PaymentScheme<ExactEvmPayload> {
  const chain = options.chain;
  return {
    id: 'exact',
    maybeSpentReasons: MAYBE_SPENT,
    nothingMovedReasons: NOTHING_MOVED,

    accepts(candidate, { skill, policy, asset }) {
      const domain = tokenDomainProblem(candidate.extra, asset);
      if (domain) return { ok: false, problem: domain, passed: 0 };
      const window = windowProblem(candidate.maxTimeoutSeconds, policy);
      if (window) return { ok: false, problem: window, passed: 1 };
      try {
        return { ok: true, requirements: parsePaymentRequirements(candidate) };
      } catch (error) {
        throw malformedTerms(skill, error);
      }
    },

    fromListing: listingTerms,

    async sign(terms, signer, { resource, previous }) {
      const requirements = terms.requirements as PaymentRequirements;
      const nonce = previous?.payload.payload.authorization.nonce;
      const payload = await signAuthorization(signer, requirements, nonce === undefined ? { resource } : { resource, nonce });
      return {
        requirements,
        payload,
        proof: encodePaymentPayload(payload),
        payer: signer.address,
        reference: payload.payload.authorization.nonce,
      };
    },

    async onRefused(refusal: Refusal<ExactEvmPayload>): Promise<RefusalVerdict> {
      // Only fast mode signed without the server's own terms: standard mode signed what it asked for.
      if (refusal.mode !== 'fast') return { type: 'refused' };
      const next = await refusal.choose();
      const sent = refusal.payment.requirements;
      if (sameTerms(next.requirements, sent)) return { type: 'refused' };
      // The same nonce binds only within one token: another asset could settle both.
      if (!sameAddress(next.requirements.asset, sent.asset))
        return { type: 'refused', why: 'refused the proof and asks for another token: not re-signing' };
      return { type: 'retry', terms: next };
    },

    onAnswer(answer: Answer, payment: ExactPayment): Settlement {
      const read = readSettleResponseHeader(answer.headers);
      const settled =
        read.type === 'receipt' &&
        read.receipt.success &&
        read.receipt.transaction !== '' &&
        read.receipt.network === payment.requirements.network &&
        (read.receipt.payer === undefined || sameAddress(read.receipt.payer, payment.payer));
      return { settled, transaction: settled && read.type === 'receipt' ? (read.receipt.transaction as Hex) : null };
    },

    /** Used → `yes` (with the transaction that used it when found), expired unused → `no`, anything else or no RPC → `unknown`. */
    async onChain(payment: ExactPayment): Promise<{ charged: ChargeState; transaction: Hex | null }> {
      const a = payment.payload.payload.authorization;
      const query = { asset: payment.requirements.asset, payer: a.from, nonce: a.nonce, validBefore: BigInt(a.validBefore) };
      const use = await chain?.read(query).catch(() => undefined);
      if (use !== 'used') return { charged: use === 'expired' ? 'no' : 'unknown', transaction: null };
      return { charged: 'yes', transaction: (await chain?.usedIn?.(query).catch(() => undefined)) ?? null };
    },
  };
}

/**
 * Terms built from the listing alone, for fast mode: the listed network, payTo and price in the
 * default asset, the documented 60 s window. Undefined when the asset's EIP-712 domain is unknown.
 */
function listingTerms(skill: Skill, policy: TermsPolicy): ChosenTerms | undefined {
  const asset = defaultAsset(policy.allowed, skill.network);
  if (!asset || asset.name === undefined || asset.version === undefined) return undefined;
  const amount = amountIn(asset, BigInt(skill.priceAtomic));
  if (amount === undefined) return undefined;
  const requirements: PaymentRequirements = {
    scheme: 'exact',
    network: skill.network,
    amount: amount.toString(),
    asset: asset.address,
    payTo: skill.paymentAddress,
    maxTimeoutSeconds: Math.min(LISTING_TIMEOUT_SECONDS, policy.maxTimeoutSeconds),
    extra: { name: asset.name, version: asset.version },
  };
  return { requirements, asset };
}

function sameTerms(x: Terms, y: Terms): boolean {
  return (
    x.scheme === y.scheme &&
    x.network === y.network &&
    x.amount === y.amount &&
    sameAddress(x.asset, y.asset) &&
    sameAddress(x.payTo, y.payTo) &&
    x.maxTimeoutSeconds === y.maxTimeoutSeconds &&
    x.extra?.name === y.extra?.name &&
    x.extra?.version === y.extra?.version
  );
}
