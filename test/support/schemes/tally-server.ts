/**
 * `tally` (tally.ts) as a skill server sells it, plugged into serve() through its scheme interface
 * (`extraSchemes`), and doing what that interface asks of every scheme (sdk/creator/scheme.ts):
 * the payment checked against its offer and its signature, taken once (a copy in progress waits
 * for the first's answer, a retry of a paid call gets its answer again; a call that charged nothing
 * leaves its total free), checked against the total held here (else a corrective 402 with that
 * total and the payer's signature of it), verified and settled by the facilitator, the handler run
 * once between. A settle the facilitator answers `settlement_pending` (or whose answer is lost)
 * holds the result and the request for up to `holdMs`, while the facilitator is asked every
 * `pollMs` what became of it; past that bound the request is answered 409 `payment_pending`, and a
 * retry of the same proof waits again. The held totals live with the seller, across the handlers
 * serve() builds. The scheme interface's types come through serve()'s options, the package's entry.
 */
import type { Address, Hex } from 'viem';
import type { ServeOptions, SettledCall } from 'skill-market/creator';
import {
  encodeBase64Json,
  FACILITATOR_REASONS,
  formatPrice,
  PAYMENT_RESPONSE_HEADER,
  X_PAYMENT_RESPONSE_HEADER,
  type PaymentRequirements,
} from 'skill-market/x402';
import { readTallyPayment, signedBy, TALLY_REASONS, TALLY_SCHEME, tallyKey, tallyNonce, type TallyPaymentPayload } from './tally';
import { tallyAnswers } from './tally-answers';

/** The skill server's scheme interface (sdk/creator/scheme.ts), as serve() takes it. */
export type ServerSchemeFactory = NonNullable<ServeOptions['extraSchemes']>[number];
type ServerScheme = ReturnType<ServerSchemeFactory>;
type PaidRequest = Parameters<ServerScheme['pay']>[0];
type SkillRoute = PaidRequest['route'];
type StoredResponse = Awaited<ReturnType<ServerScheme['pay']>>;

export interface TallySellerOptions {
  /** How often a held call asks the facilitator what became of its settle, ms; default 10. */
  pollMs?: number;
}

export interface TallySeller {
  /** For `serve({ extraSchemes })`. */
  readonly scheme: ServerSchemeFactory;
  /** Totals held, per (payer, payee, asset) (tally.ts `tallyKey`). */
  readonly totals: ReadonlyMap<string, bigint>;
  /** The paid calls reported to call tracking, in order. */
  readonly reported: SettledCall[];
}

/** Seconds a client is asked to wait before it sends a pending proof again: none, to keep tests fast (serve()'s own schemes ask 2). */
const PENDING_RETRY_SECONDS = 0;

const json = (status: number, body: unknown, headers: Record<string, string> = {}): StoredResponse => ({
  status,
  headers: { 'Content-Type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** The answer to a proof whose payment is still open past the hold. */
const pendingAnswer = (): StoredResponse =>
  json(
    409,
    {
      success: false,
      error: 'Payment pending: retry with the same proof for the result',
      code: 'payment_pending',
      retryAfter: PENDING_RETRY_SECONDS,
    },
    { 'Retry-After': String(PENDING_RETRY_SECONDS) },
  );

export function tallySeller(options: TallySellerOptions = {}): TallySeller {
  const pollMs = options.pollMs ?? 10;
  const totals = new Map<string, bigint>();
  /** The payer's signature of each held total: a corrective 402 shows it. */
  const signatures = new Map<string, Hex>();
  const reported: SettledCall[] = [];

  const scheme: ServerSchemeFactory = ({ kit, facilitator, holdMs }) => {
    const answers = tallyAnswers<StoredResponse>();
    const timers = new Set<ReturnType<typeof setTimeout>>();
    let closed = false;

    /** A settled payment: the total held, the call reported, the result with its receipt. */
    const paid = (route: SkillRoute, payment: TallyPaymentPayload, result: StoredResponse): StoredResponse => {
      const { payer, total, signature } = payment.payload;
      const { payTo, asset, network } = payment.accepted;
      totals.set(tallyKey(payer, payTo, asset), BigInt(total));
      signatures.set(tallyKey(payer, payTo, asset), signature);
      const call: SettledCall = {
        skill: route.name,
        scheme: TALLY_SCHEME,
        amount: formatPrice(route.amount, route.terms.asset.decimals),
        amountAtomic: route.amount.toString(),
        payer,
        transaction: '',
        nonce: '',
        network,
      };
      reported.push(call);
      kit.settled(call);
      // The receipt names the total now held (`extra`, which the exact codec's encoder leaves out).
      const receipt = encodeBase64Json({ success: true, transaction: '', network, payer, extra: { total } });
      return { ...result, headers: { ...result.headers, [PAYMENT_RESPONSE_HEADER]: receipt, [X_PAYMENT_RESPONSE_HEADER]: receipt } };
    };

    /** Asks the facilitator every `pollMs` what became of a held call's settle (settling again one it never got), and completes it. */
    const watch = (proof: string, call: PaidRequest, payment: TallyPaymentPayload, result: StoredResponse) => {
      const { payer, signature } = payment.payload;
      const look = async () => {
        if (closed) return;
        const requirements = call.offer as unknown as PaymentRequirements;
        const told = await facilitator.settlement(requirements, payer, tallyNonce(signature)).catch(() => undefined);
        let settled = told?.status === 'settled';
        if (told?.status === 'unknown' || told?.status === 'unsettled') {
          const again = await facilitator.forward('/settle', call.payload, call.offer).catch(() => undefined);
          settled = again?.success === true;
        }
        if (settled) return answers.complete(proof, paid(call.route, payment, result));
        if (told?.status === 'failed') return answers.complete(proof, kit.required(call.route, told.reason ?? 'settlement_failed'));
        later();
      };
      const later = () => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          void look();
        }, pollMs);
        timers.add(timer);
      };
      later();
    };

    const pay = async (call: PaidRequest): Promise<StoredResponse> => {
      const { route, offer } = call;
      const payment = readTallyPayment(call.payload, offer);
      if (typeof payment === 'string') return kit.required(route, TALLY_REASONS.invalid);
      const { payer, total, signature } = payment.payload;
      if (!(await signedBy(offer.payTo as Address, payer, BigInt(total), signature))) return kit.required(route, TALLY_REASONS.invalid);

      const key = tallyKey(payer, offer.payTo, offer.asset);
      /** The corrective 402: the total held here, under the payer's signature of it. */
      const corrective = () => {
        const last = signatures.get(key);
        const held = (totals.get(key) ?? 0n).toString();
        return kit.required(
          route,
          TALLY_REASONS.mismatch,
          last ? { scheme: TALLY_SCHEME, extra: { total: held, signature: last } } : undefined,
        );
      };
      const proof = `${key}:${total}`;
      const claim = await answers.claim(proof, JSON.stringify([route.name, call.input, signature]), holdMs);
      switch (claim.type) {
        case 'open':
          return pendingAnswer();
        case 'replay':
          return { ...claim.answer, headers: { ...claim.answer.headers, 'X-Payment-Replayed': 'true' } };
        case 'used': // a total paid for another call: this payer's tally is behind
          return corrective();
        case 'claimed':
          break;
      }
      // The payer's total must be the one held here plus the price.
      if (BigInt(total) !== (totals.get(key) ?? 0n) + route.amount) {
        answers.release(proof);
        return corrective();
      }

      let verdict: Record<string, unknown>;
      try {
        verdict = await facilitator.forward('/verify', call.payload, offer);
      } catch {
        answers.release(proof);
        return kit.unavailable('Payment facilitator unavailable; nothing was charged');
      }
      if (verdict.isValid !== true) {
        answers.release(proof);
        return kit.required(route, typeof verdict.invalidReason === 'string' ? verdict.invalidReason : 'invalid_payment');
      }

      const run = await kit.run(call, { payer, timeoutMs: route.skill.timeout, chargeable: false });
      if (run.type === 'failed') {
        // Nothing was charged: the total is still the payer's next one, for this call again or another.
        answers.release(proof);
        return run.response;
      }
      const result = json(200, run.body);
      const receipt = await facilitator.forward('/settle', call.payload, offer).catch(() => undefined);
      if (receipt?.success === true) {
        const answer = paid(route, payment, result);
        answers.complete(proof, answer);
        return answer;
      }
      if (receipt && receipt.errorReason !== FACILITATOR_REASONS.settlementPending) {
        answers.release(proof);
        return kit.required(route, typeof receipt.errorReason === 'string' ? receipt.errorReason : 'settlement_failed');
      }
      // Pending, or the settle's answer was lost: the result waits for the outcome, and so does the request, for a while.
      answers.hold(proof);
      watch(proof, call, payment, result);
      return (await answers.outcome(proof, holdMs)) ?? pendingAnswer();
    };

    return {
      id: TALLY_SCHEME,
      offer: (route) => ({ ...route.terms.requirements, scheme: TALLY_SCHEME, extra: { name: 'Tally', version: '1' } }),
      pay,
      async close() {
        closed = true;
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
      },
    };
  };

  return { scheme, totals, reported };
}
