/**
 * A second payment scheme, `tally`, plugged into the pipeline through its scheme interface only,
 * shaped like `batch-settlement` without the chain: the payer signs (EIP-712, through whatever
 * signer the pipeline holds) a cumulative total per (payer, payee, asset); the server charges by
 * raising the total it holds, answers a voucher-style receipt (success, no transaction, the new
 * total in `extra`), and answers a corrective 402 (`tally_mismatch` with its total and the
 * payer's last signature for it) when the payer's total is not its own plus the price. The client
 * adopts a corrected total only under its own signature. Served by a small Bun server that really
 * recovers every signature.
 */
import { recoverTypedDataAddress, type Address, type Hex } from 'viem';
import type { ChargeState, ChosenTerms, PaymentScheme, PaymentTypedData, SignedPayment, Skill, Terms } from 'skill-market/client';
import {
  decodeBase64Json,
  encodeBase64Json,
  encodePaymentRequired,
  formatPriceUsd,
  getKnownNetwork,
  type Caip2Network,
} from 'skill-market/x402';

export const TALLY_NETWORK: Caip2Network = 'eip155:84532';
/** Base Sepolia's USDC: an asset the pipeline accepts on that network without options. */
export const TALLY_ASSET = getKnownNetwork(TALLY_NETWORK)!.usdc.address;
export const MISMATCH = 'tally_mismatch';

interface TallyPayload {
  payer: Address;
  total: string;
  signature: Hex;
}

function tallyTypedData(payTo: Address, payer: Address, total: bigint): PaymentTypedData {
  return {
    domain: { name: 'Tally', version: '1', chainId: 84532, verifyingContract: payTo },
    types: {
      Tally: [
        { name: 'payer', type: 'address' },
        { name: 'total', type: 'uint256' },
      ],
    },
    primaryType: 'Tally',
    message: { payer, total },
  };
}

const recoverTally = (typedData: PaymentTypedData, signature: Hex) =>
  recoverTypedDataAddress({ ...typedData, signature } as Parameters<typeof recoverTypedDataAddress>[0]);

const keyOf = (payer: string, terms: Terms) => `${payer}:${terms.payTo}:${terms.asset}`.toLowerCase();

/** The client side: the totals it agreed to, per (payer, payee, asset), and every call's end as the pipeline reported it. */
export function tallyScheme(): PaymentScheme<TallyPayload> & {
  totals: Map<string, bigint>;
  finished: { total: string; charged: ChargeState }[];
} {
  const totals = new Map<string, bigint>();
  const finished: { total: string; charged: ChargeState }[] = [];
  return {
    id: 'tally',
    totals,
    finished,
    maybeSpentReasons: new Set(),
    nothingMovedReasons: new Set([MISMATCH]),
    accepts(candidate) {
      const extra = (candidate.extra ?? {}) as Record<string, unknown>;
      if (extra.name !== 'Tally')
        return { ok: false, problem: { field: 'scheme', expected: 'a Tally domain', actual: String(extra.name) }, passed: 0 };
      return { ok: true, requirements: candidate as unknown as Terms };
    },
    async sign(terms: ChosenTerms<Terms>, signer, { resource }) {
      const requirements = terms.requirements;
      const total = (totals.get(keyOf(signer.address, requirements)) ?? 0n) + BigInt(requirements.amount);
      const signature = await signer.signTypedData(tallyTypedData(requirements.payTo, signer.address, total));
      const payload = {
        x402Version: 2 as const,
        accepted: requirements,
        resource,
        payload: { payer: signer.address, total: total.toString(), signature },
      };
      return { requirements, payload, proof: encodeBase64Json(payload), payer: signer.address, reference: signature.slice(0, 66) as Hex };
    },
    async onRefused({ reason, candidates, payment, choose }) {
      if (reason !== MISMATCH) return { type: 'refused' };
      const extra = ((candidates[0] ?? {}) as { extra?: { total?: string; signature?: Hex } }).extra ?? {};
      if (typeof extra.total !== 'string' || typeof extra.signature !== 'string') return { type: 'refused' };
      const { payTo } = payment.requirements;
      // A total the server claims is adopted only under this payer's own signature.
      const signer = await recoverTally(tallyTypedData(payTo, payment.payer, BigInt(extra.total)), extra.signature);
      if (signer.toLowerCase() !== payment.payer.toLowerCase()) return { type: 'refused', why: 'claims a total this payer never signed' };
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
      finished.push({ total: payment.payload.payload.total, charged });
    },
  };
}

/** The terms a tally server asks for. */
export function tallyTerms(payTo: Address, amount: bigint, extra: Record<string, unknown> = {}): Terms {
  return {
    scheme: 'tally',
    network: TALLY_NETWORK,
    amount: amount.toString(),
    asset: TALLY_ASSET,
    payTo,
    maxTimeoutSeconds: 60,
    extra: { name: 'Tally', version: '1', ...extra },
  };
}

export interface TallyServer {
  url: string;
  /** Totals held per payer (lowercase). */
  totals: Map<string, bigint>;
  /** Requests received, paid or not. */
  posts: number;
  /** Proofs received: the signer each recovered to, and its total. */
  proofs: { payer: string; total: string }[];
  /** Offer these terms besides (or instead of) tally's: the 402's accepts in the server's order. */
  offers: (tally: Terms) => Terms[];
  /** Answer every proof with a corrective 402. */
  alwaysMismatch: boolean;
  close(): void;
}

/** A skill server paid in `tally` at `price` to `payTo`, echoing its input. */
export function startTallyServer(payTo: Address, price: bigint): TallyServer {
  const state: TallyServer = {
    url: '',
    totals: new Map(),
    posts: 0,
    proofs: [],
    offers: (tally) => [tally],
    alwaysMismatch: false,
    close: () => server.stop(true),
  };
  const lastSignature = new Map<string, Hex>();
  const required = (url: string, error?: string, extra: Record<string, unknown> = {}) =>
    new Response('{}', {
      status: 402,
      headers: {
        'content-type': 'application/json',
        'PAYMENT-REQUIRED': encodePaymentRequired({
          x402Version: 2,
          ...(error ? { error } : {}),
          resource: { url },
          accepts: state.offers(tallyTerms(payTo, price, extra)),
        }),
      },
    });
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      state.posts++;
      const input = await request.json();
      const proof = request.headers.get('PAYMENT-SIGNATURE');
      if (!proof) return required(request.url);
      const sent = decodeBase64Json(proof, 'malformed_payment', 'payment') as { payload: TallyPayload };
      const total = BigInt(sent.payload.total);
      const signer = await recoverTally(tallyTypedData(payTo, sent.payload.payer, total), sent.payload.signature);
      if (signer.toLowerCase() !== sent.payload.payer.toLowerCase()) return Response.json({ error: 'bad signature' }, { status: 400 });
      const payer = signer.toLowerCase();
      state.proofs.push({ payer, total: sent.payload.total });
      const held = state.totals.get(payer) ?? 0n;
      if (state.alwaysMismatch || total !== held + price) {
        const signature = lastSignature.get(payer);
        return required(request.url, MISMATCH, signature ? { total: held.toString(), signature } : {});
      }
      state.totals.set(payer, total);
      lastSignature.set(payer, sent.payload.signature);
      const receipt = { success: true, transaction: '', network: TALLY_NETWORK, payer, extra: { total: total.toString() } };
      return Response.json(
        { success: true, result: { echo: input }, timestamp: new Date().toISOString() },
        { headers: { 'PAYMENT-RESPONSE': encodeBase64Json(receipt) } },
      );
    },
  });
  state.url = `http://127.0.0.1:${server.port}`;
  return state;
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
