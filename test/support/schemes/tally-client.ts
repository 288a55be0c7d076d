/**
 * `tally` on the consumer side (tally.ts has the scheme), plugged into the PaymentPipeline through
 * its scheme interface only: it signs the next cumulative total through whatever signer the pipeline
 * holds, adopts a corrected total from a corrective 402 only under its own signature, and counts a
 * total as agreed once the server's receipt names it. Like a payment channel, one payer's tally with
 * one payee is signed for one call at a time: `sign` holds it until the pipeline's `finish`.
 */
import type { Address, Hex } from 'viem';
import type { ChargeState, ChosenTerms, PaymentScheme, SignedPayment, Skill, Terms } from 'skill-market/client';
import { decodeBase64Json, encodeBase64Json, formatPriceUsd } from 'skill-market/x402';
import { signedBy, TALLY_NETWORK, TALLY_REASONS, TALLY_SCHEME, tallyKey, tallyTypedData, type TallyPayload } from './tally';

const keyOf = (payer: string, terms: Terms) => tallyKey(payer, terms.payTo, terms.asset);

/** The client side: the totals it agreed to, per (payer, payee, asset), and every call's end as the pipeline reported it. */
export function tallyScheme(): PaymentScheme<TallyPayload> & {
  totals: Map<string, bigint>;
  finished: { total: string; charged: ChargeState }[];
} {
  const totals = new Map<string, bigint>();
  const finished: { total: string; charged: ChargeState }[] = [];
  /** The tallies being signed for, and how the call holding each lets it go. */
  const busy = new Map<string, Promise<void>>();
  const holders = new Map<SignedPayment<TallyPayload>, () => void>();
  /** Waits for the tally `key`, then holds it: the answer lets it go. */
  const take = async (key: string): Promise<() => void> => {
    const before = busy.get(key) ?? Promise.resolve();
    let release = () => {};
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const queued = before.then(() => mine);
    busy.set(key, queued);
    await before;
    return () => {
      release();
      if (busy.get(key) === queued) busy.delete(key);
    };
  };
  return {
    id: TALLY_SCHEME,
    totals,
    finished,
    maybeSpentReasons: new Set(),
    nothingMovedReasons: new Set([TALLY_REASONS.mismatch]),
    accepts(candidate) {
      const extra = (candidate.extra ?? {}) as Record<string, unknown>;
      if (extra.name !== 'Tally')
        return { ok: false, problem: { field: 'scheme', expected: 'a Tally domain', actual: String(extra.name) }, passed: 0 };
      return { ok: true, requirements: candidate as unknown as Terms };
    },
    async sign(terms: ChosenTerms<Terms>, signer, { resource, previous }) {
      const requirements = terms.requirements;
      const key = keyOf(signer.address, requirements);
      // A retry after a corrective 402 is the same call: it keeps the tally its first payment took.
      const held = previous ? holders.get(previous) : undefined;
      if (previous) holders.delete(previous);
      const release = held ?? (await take(key));
      try {
        const total = (totals.get(key) ?? 0n) + BigInt(requirements.amount);
        const signature = await signer.signTypedData(tallyTypedData(requirements.payTo, signer.address, total));
        const payload = {
          x402Version: 2 as const,
          accepted: requirements,
          resource,
          payload: { payer: signer.address, total: total.toString(), signature },
        };
        const payment = {
          requirements,
          payload,
          proof: encodeBase64Json(payload),
          payer: signer.address,
          reference: signature.slice(0, 66) as Hex,
        };
        holders.set(payment, release);
        return payment;
      } catch (error) {
        release();
        throw error;
      }
    },
    async onRefused({ reason, candidates, payment, choose }) {
      if (reason !== TALLY_REASONS.mismatch) return { type: 'refused' };
      const offer = candidates.find((candidate) => (candidate as { scheme?: unknown }).scheme === TALLY_SCHEME);
      const extra = ((offer ?? {}) as { extra?: { total?: string; signature?: Hex } }).extra ?? {};
      if (typeof extra.total !== 'string' || typeof extra.signature !== 'string') return { type: 'refused' };
      const { payTo } = payment.requirements;
      // A total the server claims is adopted only under this payer's own signature.
      if (!(await signedBy(payTo, payment.payer, BigInt(extra.total), extra.signature)))
        return { type: 'refused', why: 'claims a total this payer never signed' };
      totals.set(keyOf(payment.payer, payment.requirements), BigInt(extra.total));
      return { type: 'retry', terms: await choose() };
    },
    onAnswer(answer, payment: SignedPayment<TallyPayload>) {
      const header = answer.headers.get('PAYMENT-RESPONSE');
      const receipt = header
        ? (decodeBase64Json(header, 'malformed_payment', 'receipt') as { success?: boolean; extra?: { total?: string } })
        : {};
      const settled = receipt.success === true && receipt.extra?.total === payment.payload.payload.total;
      if (settled) totals.set(keyOf(payment.payer, payment.requirements), BigInt(payment.payload.payload.total));
      return { settled, transaction: null };
    },
    async onChain() {
      return { charged: 'unknown', transaction: null };
    },
    finish(payment, charged) {
      holders.get(payment)?.();
      holders.delete(payment);
      finished.push({ total: payment.payload.payload.total, charged });
    },
  };
}

/** The registry listing of a tally skill at `endpoint`. */
export function tallyListing(endpoint: string, payTo: Address, price: bigint): Skill {
  const at = new Date().toISOString();
  return {
    id: crypto.randomUUID(),
    slug: `tally-${crypto.randomUUID().slice(0, 8)}`,
    name: 'tally-echo',
    description: null,
    price: formatPriceUsd(price),
    priceUsdc: formatPriceUsd(price).slice(1),
    priceAtomic: price.toString(),
    currency: 'USDC',
    network: TALLY_NETWORK,
    endpoint,
    paymentAddress: payTo,
    inputSchema: null,
    outputSchema: null,
    category: null,
    groups: [],
    isActive: true,
    verified: false,
    creatorId: crypto.randomUUID(),
    creatorAddress: payTo,
    callCount: 0,
    paidCallCount: 0,
    viewCount: 0,
    favoriteCount: 0,
    rating: null,
    reviewCount: 0,
    totalRevenueAtomic: '0',
    totalRevenue: '0',
    status: 'unknown',
    latencyMs: null,
    lastUpAt: null,
    createdAt: at,
    updatedAt: at,
  };
}
