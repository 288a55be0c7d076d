/**
 * The x402 `upto` scheme on the skill server (usage-based prices): for a skill defined with
 * `upto: true`, its price is a maximum the payer signs once per call (a Permit2 authorization), and
 * what the handler charges (`context.charge`, at most the price; the price when it says nothing) is
 * settled after a good result. The order protects both sides: the facilitator verifies the
 * authorization first (it records it, so one authorization runs the handler once, however many
 * copies arrive), the handler runs, and only then the charge is settled; the result leaves with the
 * settlement's receipt. A failed run settles nothing (the authorization is released with a charge
 * of 0, which sends nothing).
 *
 * The offer names the facilitator's address that will settle (`extra.facilitatorAddress`, from its
 * `/supported`): it is offered once that address is known.
 */
import {
  acceptedMatches,
  encodeBase64Json,
  formatPrice,
  PAYMENT_RESPONSE_HEADER,
  parseSettleResponse,
  parseUptoPayload,
  UPTO_SCHEME,
  X402Error,
  X_PAYMENT_RESPONSE_HEADER,
  type PaymentRequirements,
  type SettleResponse,
  type UptoPayload,
} from '../../../x402/index';
import type { FacilitatorClient } from '../../facilitator-client';
import { jsonAnswer, type StoredResponse } from '../../http';
import { errorText, type CreatorLogger } from '../../logger';
import type { BaseRoute, Offer, PaidRequest, SchemeKit, ServerScheme } from '../../scheme';

/** Seconds an authorization must still be valid after the handler, for its settlement to go through. */
const SETTLE_MARGIN_SECONDS = 8;

export interface UptoSchemeDeps {
  kit: SchemeKit;
  facilitator: FacilitatorClient;
  logger: CreatorLogger;
  /** The facilitator's address for upto (its `/supported` `extra.facilitatorAddress`), when known at start. */
  facilitatorAddress?: string | undefined;
}

/** The upto scheme, with what the skill server controls of it besides calls. */
export interface UptoScheme extends ServerScheme {
  /** Offers upto naming this facilitator address from now on; true when that changed the offers. */
  useFacilitatorAddress(address: string): boolean;
}

export function createUptoScheme(deps: UptoSchemeDeps): UptoScheme {
  const { kit, facilitator, logger } = deps;
  let facilitatorAddress = deps.facilitatorAddress;

  const offer = (route: BaseRoute): Offer | undefined => {
    if (!route.skill.upto || !facilitatorAddress) return undefined;
    const r = route.terms.requirements;
    return {
      scheme: UPTO_SCHEME,
      network: r.network,
      amount: r.amount,
      asset: r.asset,
      payTo: r.payTo,
      maxTimeoutSeconds: r.maxTimeoutSeconds,
      extra: { ...r.extra, assetTransferMethod: 'permit2', facilitatorAddress },
    };
  };

  /** Settles `amount` of the payment (0: releases it, nothing is sent). */
  const settle = async (paid: PaidRequest, amount: bigint): Promise<SettleResponse> =>
    parseSettleResponse(await facilitator.forward('/settle', paid.payload, { ...paid.offer, amount: amount.toString() }));

  const pay = async (paid: PaidRequest): Promise<StoredResponse> => {
    const { route, offer: terms } = paid;
    let payment: UptoPayload;
    try {
      payment = parseUptoPayload(paid.payload.payload);
    } catch (error) {
      return kit.required(route, error instanceof X402Error ? error.message : 'Malformed payment payload');
    }
    if (paid.payload.x402Version !== 2 || !acceptedMatches(paid.payload.accepted, terms as unknown as PaymentRequirements)) {
      return kit.required(route, 'The payment does not match the payment requirements of this skill');
    }
    const a = payment.permit2Authorization;
    // The facilitator records what it verifies: a copy of this authorization is refused from here on.
    try {
      const verdict = await facilitator.forward('/verify', paid.payload, terms);
      if (verdict.isValid !== true) {
        return kit.required(route, typeof verdict.invalidReason === 'string' ? verdict.invalidReason : 'invalid_payment');
      }
    } catch (error) {
      logger.warn('payment facilitator unavailable', { skill: route.name, error: errorText(error) });
      return kit.unavailable('Payment facilitator unavailable; nothing was charged');
    }
    const secondsLeft = Number(BigInt(a.deadline) - BigInt(Math.floor(kit.now() / 1000))) - SETTLE_MARGIN_SECONDS;
    const timeoutMs = Math.min(route.skill.timeout, secondsLeft * 1000);
    const run = timeoutMs > 0 ? await kit.run(paid, { payer: a.from, timeoutMs, chargeable: true }) : undefined;
    if (run?.type !== 'ok') {
      void settle(paid, 0n).catch((error: unknown) =>
        logger.warn('upto authorization not released', { skill: route.name, error: errorText(error) }),
      );
      return run ? run.response : kit.required(route, 'permit2_deadline_expired');
    }
    let receipt: SettleResponse;
    try {
      receipt = await settle(paid, run.charged);
    } catch (error) {
      // The settle may have reached the facilitator and moved the money: the result goes out, the charge unconfirmed.
      logger.warn('settlement outcome unknown (facilitator unavailable); result sent', { skill: route.name, error: errorText(error) });
      return jsonAnswer(200, run.body);
    }
    if (!receipt.success && receipt.errorReason !== 'settlement_pending') {
      logger.warn('settlement refused; result withheld', { skill: route.name, reason: receipt.errorReason });
      return kit.required(route, receipt.errorReason ?? 'settlement_failed');
    }
    const settled = {
      skill: route.name,
      scheme: UPTO_SCHEME,
      amount: formatPrice(run.charged, route.terms.asset.decimals),
      amountAtomic: run.charged.toString(),
      payer: receipt.payer ?? a.from,
      transaction: receipt.transaction,
      nonce: '',
      network: receipt.network,
      ...(run.tier === undefined ? {} : { tier: run.tier }),
    };
    // The scheme's receipt names the amount charged (the upto SettlementResponse's `amount`).
    const value = encodeBase64Json({ ...receipt, amount: run.charged.toString() });
    const answer = await kit.paidAnswer(route, settled, run.body, { [PAYMENT_RESPONSE_HEADER]: value, [X_PAYMENT_RESPONSE_HEADER]: value });
    if (run.charged > 0n) kit.settled(answer.settled);
    return answer.response;
  };

  return {
    id: UPTO_SCHEME,
    offer,
    pay,
    useFacilitatorAddress(address) {
      if (facilitatorAddress?.toLowerCase() === address.toLowerCase()) return false;
      facilitatorAddress = address;
      return true;
    },
  };
}
