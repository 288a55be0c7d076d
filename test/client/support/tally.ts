/**
 * A stand-alone skill server paid in `tally` (test/support/schemes/tally.ts), for the client's
 * tests of choosing among offers, corrective 402s and signers: a small Bun server that really
 * recovers every signature, whose offers and refusals a test sets freely. The tally of a real
 * serve() skill server and our facilitator is test/support/schemes/ (test/pipeline/ uses it).
 */
import type { Address, Hex } from 'viem';
import type { Terms } from 'skill-market/client';
import { decodeBase64Json, encodeBase64Json, encodePaymentRequired } from 'skill-market/x402';
import { recoverTally, TALLY_NETWORK, TALLY_REASONS, tallyTerms, tallyTypedData, type TallyPayload } from '../../support/schemes/tally';

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
        return required(request.url, TALLY_REASONS.mismatch, signature ? { total: held.toString(), signature } : {});
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
