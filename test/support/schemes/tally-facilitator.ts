/**
 * `tally` (tally.ts) as our facilitator settles it, plugged into `createFacilitator` through its
 * scheme interface (`extraSchemes`). Settling a tally payment records the payer's new total with
 * the payee, once: the same payment settled again answers as the first time. Verify and settle
 * check the signature, the terms the payment accepted, that the total is the settled one plus the
 * price (`tally_mismatch`), and the payer's credit (`insufficient_funds`). A test can hold settles
 * (`hold()`): they answer `settlement_pending` and stay pending, as a transaction not yet mined,
 * until `release()`; `/settlements` tells what became of each.
 */
import type { Address, Hex } from 'viem';
import { FACILITATOR_REASONS, type FacilitatorRequest, type SettleResponse } from 'skill-market/x402';
import type { FacilitatorScheme } from '../../../src/facilitator/scheme';
import type { AuthorizationKey, SettlementStatus, VerifyResponse } from '../../../src/facilitator/types';
import {
  readTallyPayment,
  signedBy,
  TALLY_ASSET,
  TALLY_NETWORK,
  TALLY_REASONS,
  TALLY_SCHEME,
  tallyKey,
  tallyNonce,
  type TallyPaymentPayload,
} from './tally';

/** One payment as this facilitator took it. */
interface Taken {
  payer: Address;
  key: string;
  total: bigint;
  status: 'pending' | 'settled';
}

export interface TallyFacilitator extends FacilitatorScheme {
  /** Settled total per (payer, payee, asset): what the payers owe the payees. */
  readonly totals: ReadonlyMap<string, bigint>;
  /** Every verify and settle, in order, with the total it named and the answer (`ok`, `pending` or the reason). */
  readonly calls: { verb: 'verify' | 'settle'; total: string; answer: string }[];
  /** Most a payer may owe in all (lowercase address); default unlimited. */
  readonly credit: Map<string, bigint>;
  /** From now on, settles answer `settlement_pending` and stay pending. */
  hold(): void;
  /** Settles what is pending, and answers settles at once again. */
  release(): void;
}

export function tallyFacilitator(): TallyFacilitator {
  const totals = new Map<string, bigint>();
  const taken = new Map<Hex, Taken>();
  const calls: TallyFacilitator['calls'] = [];
  const credit = new Map<string, bigint>();
  let holding = false;

  /** The request's payment when it may be settled, else the reason it may not. */
  const check = async (request: FacilitatorRequest): Promise<{ payment: TallyPaymentPayload } | { reason: string; message: string }> => {
    const offer = request.paymentRequirements as { scheme: string; network: string; asset: string; payTo: Address; amount: string };
    const payment = readTallyPayment(request.paymentPayload, offer);
    if (typeof payment === 'string') return { reason: TALLY_REASONS.invalid, message: payment };
    const { payer, total, signature } = payment.payload;
    if (!(await signedBy(offer.payTo, payer, BigInt(total), signature)))
      return { reason: TALLY_REASONS.invalid, message: 'the signature is not the payer’s' };
    const owed = totals.get(tallyKey(payer, offer.payTo, offer.asset)) ?? 0n;
    if (BigInt(total) !== owed + BigInt(offer.amount))
      return { reason: TALLY_REASONS.mismatch, message: `the settled total is ${owed}; this payment says ${total}` };
    const limit = credit.get(payer.toLowerCase());
    if (limit !== undefined && BigInt(total) > limit)
      return { reason: TALLY_REASONS.insufficientFunds, message: `the payer's credit is ${limit}` };
    return { payment };
  };

  const settled = (payer: Address): SettleResponse => ({ success: true, transaction: '', network: TALLY_NETWORK, payer });
  const pending = (payer: Address): SettleResponse => ({
    success: false,
    errorReason: FACILITATOR_REASONS.settlementPending,
    transaction: '',
    network: TALLY_NETWORK,
    payer,
  });
  const settle = (payment: Taken) => {
    payment.status = 'settled';
    totals.set(payment.key, payment.total);
  };

  return {
    id: TALLY_SCHEME,
    kinds: [{ x402Version: 2, scheme: TALLY_SCHEME, network: TALLY_NETWORK }],
    signers: {},
    totals,
    calls,
    credit,
    async verify(request): Promise<VerifyResponse> {
      const checked = await check(request);
      const total = String((request.paymentPayload as { payload?: { total?: unknown } }).payload?.total);
      if ('reason' in checked) {
        calls.push({ verb: 'verify', total, answer: checked.reason });
        return { isValid: false, invalidReason: checked.reason, invalidMessage: checked.message };
      }
      calls.push({ verb: 'verify', total, answer: 'ok' });
      return { isValid: true, payer: checked.payment.payload.payer };
    },
    async settle(request): Promise<SettleResponse> {
      const payload = (request.paymentPayload as Partial<TallyPaymentPayload>).payload;
      const nonce = typeof payload?.signature === 'string' ? tallyNonce(payload.signature) : undefined;
      const before = nonce && taken.get(nonce);
      // The same payment settled again: the answer of the first time.
      if (before) {
        calls.push({ verb: 'settle', total: before.total.toString(), answer: before.status === 'settled' ? 'ok' : 'pending' });
        return before.status === 'settled' ? settled(before.payer) : pending(before.payer);
      }
      const checked = await check(request);
      const total = String(payload?.total);
      if ('reason' in checked) {
        calls.push({ verb: 'settle', total, answer: checked.reason });
        return { success: false, errorReason: checked.reason, errorMessage: checked.message, transaction: '', network: TALLY_NETWORK };
      }
      const { payer, signature } = checked.payment.payload;
      const offer = request.paymentRequirements as { payTo: string; asset: string };
      const payment: Taken = { payer, key: tallyKey(payer, offer.payTo, offer.asset), total: BigInt(total), status: 'pending' };
      taken.set(tallyNonce(signature), payment);
      if (holding) {
        calls.push({ verb: 'settle', total, answer: 'pending' });
        return pending(payer);
      }
      settle(payment);
      calls.push({ verb: 'settle', total, answer: 'ok' });
      return settled(payer);
    },
    async settlement(key: AuthorizationKey): Promise<SettlementStatus | undefined> {
      if (key.network !== TALLY_NETWORK || key.asset.toLowerCase() !== TALLY_ASSET.toLowerCase()) return undefined;
      const payment = taken.get(key.nonce.toLowerCase() as Hex);
      if (!payment || payment.payer.toLowerCase() !== key.payer.toLowerCase()) return undefined;
      return { status: payment.status, network: TALLY_NETWORK, payer: payment.payer, transaction: '' };
    },
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const payment of taken.values()) if (payment.status === 'pending') settle(payment);
    },
  };
}
