/**
 * The checks of an upto request that need no chain: network, asset, what the payload accepted, the
 * spender, recipient and facilitator the witness names, the time window, and the amount (equal to
 * the signed maximum at verify; at most it at settle, where `amount` is the charge).
 */
import { getAddress, type Address } from 'viem';
import { UPTO_PROXY_ADDRESS, sameAddress } from 'skill-market/x402';
import type { Rejection } from '../../chain';
import { REASONS } from './reasons';
import type { UptoRequest } from './request';

/** An authorization must stay valid at least this long after it is checked (as the reference asks). */
const DEADLINE_MARGIN_SECONDS = 6n;

export interface TermsContext {
  network: string;
  /** Accepted token addresses, lowercase. */
  assets: ReadonlySet<string>;
  /** The relayers that may be named as the facilitator. */
  facilitators: readonly Address[];
  nowSeconds: bigint;
}

export function checkTerms(request: UptoRequest, ctx: TermsContext, phase: 'verify' | 'settle'): Rejection | undefined {
  const { requirements: r, accepted, payment } = request;
  const a = payment.permit2Authorization;
  if (r.network !== ctx.network)
    return { reason: REASONS.networkMismatch, message: `This facilitator settles on ${ctx.network}, not ${r.network}` };
  if (!ctx.assets.has(r.asset.toLowerCase()))
    return { reason: REASONS.assetNotAllowed, message: `The asset ${r.asset} is not settled here` };
  if (!sameAddress(accepted.asset, r.asset) || !sameAddress(accepted.payTo, r.payTo)) {
    return { reason: REASONS.acceptedMismatch, message: 'The payload accepted another asset or recipient than the requirements name' };
  }
  if (!sameAddress(a.permitted.token, r.asset)) return { reason: REASONS.tokenMismatch, message: 'The authorization is for another token' };
  if (!sameAddress(a.spender, UPTO_PROXY_ADDRESS)) {
    return { reason: REASONS.invalidSpender, message: `The authorization's spender must be the upto proxy ${UPTO_PROXY_ADDRESS}` };
  }
  if (!sameAddress(a.witness.to, r.payTo))
    return { reason: REASONS.recipientMismatch, message: 'The authorization pays another recipient than payTo' };
  if (!ctx.facilitators.some((f) => sameAddress(f, a.witness.facilitator))) {
    return {
      reason: REASONS.facilitatorMismatch,
      message: `The authorization names facilitator ${getAddress(a.witness.facilitator)}, not one of this facilitator's`,
    };
  }
  if (BigInt(a.deadline) < ctx.nowSeconds + DEADLINE_MARGIN_SECONDS)
    return { reason: REASONS.deadlineExpired, message: 'The authorization has expired' };
  if (BigInt(a.witness.validAfter) > ctx.nowSeconds) return { reason: REASONS.notYetValid, message: 'The authorization is not valid yet' };
  const max = BigInt(a.permitted.amount);
  const amount = BigInt(r.amount);
  if (phase === 'verify' && amount !== max) {
    return { reason: REASONS.amountMismatch, message: `The authorization's maximum ${max} is not the required ${amount}` };
  }
  if (phase === 'settle' && amount > max) {
    return { reason: REASONS.settlementExceedsAmount, message: `The charge ${amount} exceeds the authorized maximum ${max}` };
  }
  return undefined;
}
