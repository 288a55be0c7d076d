/**
 * The facilitator's verbs, free of HTTP: verify, settle, supported, receipt, settlement. Each
 * request goes whole to the scheme it names (`paymentPayload.accepted.scheme`, else
 * `paymentRequirements.scheme`), which parses it and gives the verdict; a scheme this facilitator
 * does not settle, or does not offer on this chain now (offering.ts), is refused `unsupported_scheme`
 * with the reason (a verdict, answered 200 as the reference facilitators do), and a body that is not
 * a request at all throws FacilitatorRequestError (400). `/supported` is what the offered schemes
 * offer: their kinds, and the addresses that send for them.
 */
import { requestedNetwork, type SettleResponse } from 'skill-market/x402';
import { DISPATCH_REASONS } from './reasons';
import { parseEnvelope } from './request';
import type { SchemeOffering } from './offering';
import type { FacilitatorScheme, SchemeSettleOptions } from './scheme';
import type { AuthorizationKey, SettlementReceipt, SettlementStatus, SupportedResponse, VerifyResponse } from './types';

export interface FacilitatorService {
  /** `POST /verify`: throws FacilitatorRequestError on a malformed body. */
  verify(body: unknown): Promise<VerifyResponse>;
  /** `POST /settle`: throws FacilitatorRequestError on a malformed body. */
  settle(body: unknown, options?: SchemeSettleOptions): Promise<SettleResponse>;
  supported(): Promise<SupportedResponse>;
  /** A settlement transaction, as the scheme that sent it stored it. */
  receipt(txHash: string): Promise<SettlementReceipt | undefined>;
  /** What became of one authorization; undefined when this facilitator never accepted it. */
  settlement(key: AuthorizationKey): Promise<SettlementStatus | undefined>;
  /** What became of each of several authorizations, in order; null for one never accepted here. */
  settlements(keys: readonly AuthorizationKey[]): Promise<(SettlementStatus | null)[]>;
}

/** `/supported` of these schemes: their kinds in order, and each CAIP family's signers once each. */
function supportedOf(schemes: readonly FacilitatorScheme[]): SupportedResponse {
  const signers = new Map<string, Set<string>>();
  for (const scheme of schemes) {
    for (const [family, addresses] of Object.entries(scheme.signers)) {
      signers.set(family, new Set([...(signers.get(family) ?? []), ...addresses]));
    }
  }
  const listed = Object.fromEntries([...signers].map(([family, addresses]) => [family, [...addresses]]));
  return { kinds: schemes.flatMap((scheme) => scheme.kinds), extensions: [], signers: listed };
}

export function createFacilitatorService(offering: SchemeOffering): FacilitatorService {
  const { schemes } = offering;
  if (new Set(schemes.map((scheme) => scheme.id)).size !== schemes.length) throw new Error('Two schemes share one id');
  const unsupported = (scheme: string) => {
    const settled =
      offering
        .offered()
        .map((s) => s.id)
        .join(', ') || 'none';
    const withheld = offering.withheld(scheme);
    const named = JSON.stringify(scheme.slice(0, 64));
    return {
      reason: DISPATCH_REASONS.unsupportedScheme,
      message: withheld
        ? `This facilitator does not offer the scheme ${named} now: ${withheld} (it settles: ${settled})`
        : `This facilitator does not settle the scheme ${named} (it settles: ${settled})`,
    };
  };

  return {
    async verify(body) {
      const request = parseEnvelope(body);
      const scheme = await offering.find(request.scheme);
      if (scheme) return scheme.verify(request.body);
      const refused = unsupported(request.scheme);
      return { isValid: false, invalidReason: refused.reason, invalidMessage: refused.message };
    },

    async settle(body, options = {}) {
      const request = parseEnvelope(body);
      const scheme = await offering.find(request.scheme);
      if (scheme) return scheme.settle(request.body, options);
      const refused = unsupported(request.scheme);
      return {
        success: false,
        errorReason: refused.reason,
        errorMessage: refused.message,
        transaction: '',
        network: requestedNetwork(body),
      };
    },

    supported: async () => structuredClone(supportedOf(await offering.listed())),

    async receipt(txHash) {
      for (const scheme of schemes) {
        const receipt = await scheme.receipt?.(txHash);
        if (receipt) return receipt;
      }
      return undefined;
    },

    async settlement(key) {
      for (const scheme of schemes) {
        const status = await scheme.settlement?.(key);
        if (status) return status;
      }
      return undefined;
    },

    async settlements(keys) {
      const found: (SettlementStatus | null)[] = keys.map(() => null);
      for (const scheme of schemes) {
        if (!scheme.settlements || found.every(Boolean)) continue;
        const answers = await scheme.settlements(keys);
        answers.forEach((status, i) => {
          found[i] ??= status;
        });
      }
      return found;
    },
  };
}
