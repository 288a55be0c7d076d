/**
 * The terms a listing shows in discovery: what the skill's 402 asks now. The skill server's offers
 * come from its /health answer (ours reports `accepts` by skill name) or, for another SDK's server,
 * from its live 402 (the health probe asks each skill: skill-health/live-offers.ts). They are listed
 * as the server gives them, in its order, those on the listing's own terms (payee, network, token,
 * exactly the price) and well formed for their scheme (`exact`; `upto` naming its facilitator;
 * `batch-settlement` with a channel `extra`), so a proof signed from the listing pays the server. When none stands, the listing's own
 * `exact` terms do.
 */
import { ADDRESS_PATTERN, type AnyPaymentRequirements, parseBatchRequirements, parseBatchRequirementsExtra } from 'skill-market/x402';

const MAX_TIMEOUT_SECONDS = 31_536_000;

/** The accepts to list for the listing's `exact` requirements, given what its server asks (undefined: nothing known). */
export function listedAccepts(exact: AnyPaymentRequirements, reported: readonly unknown[] | undefined): AnyPaymentRequirements[] {
  const onTerms = (offer: Record<string, unknown>) =>
    offer.network === exact.network &&
    offer.amount === exact.amount &&
    typeof offer.asset === 'string' &&
    offer.asset.toLowerCase() === exact.asset.toLowerCase() &&
    typeof offer.payTo === 'string' &&
    offer.payTo.toLowerCase() === exact.payTo.toLowerCase() &&
    Number.isInteger(offer.maxTimeoutSeconds) &&
    (offer.maxTimeoutSeconds as number) >= 1 &&
    (offer.maxTimeoutSeconds as number) <= MAX_TIMEOUT_SECONDS;
  const offers = (reported ?? []).filter((o): o is Record<string, unknown> => typeof o === 'object' && o !== null && !Array.isArray(o));
  const listed = offers.filter((o) => onTerms(o) && wellFormed(o)) as unknown as AnyPaymentRequirements[];
  return listed.length > 0 ? listed : [exact];
}

/**
 * Whether an offer is one a client of its scheme can pay: `exact` with a plain `extra`, `upto` (its
 * maximum the price) naming the facilitator that settles it, or a channel offer that parses.
 */
function wellFormed(offer: Record<string, unknown>): boolean {
  if (offer.scheme === 'exact') return offer.extra === undefined || plainExtra(offer.extra);
  if (offer.scheme === 'upto') {
    const facilitator = plainExtra(offer.extra) ? (offer.extra as Record<string, unknown>).facilitatorAddress : undefined;
    return typeof facilitator === 'string' && ADDRESS_PATTERN.test(facilitator);
  }
  if (offer.scheme !== 'batch-settlement') return false;
  try {
    parseBatchRequirements(offer);
    parseBatchRequirementsExtra(offer.extra);
    return plainExtra(offer.extra);
  } catch {
    return false;
  }
}

/** An `extra` of a few plain values (the token's EIP-712 name and version, and the like). */
function plainExtra(extra: unknown): boolean {
  if (typeof extra !== 'object' || extra === null || Array.isArray(extra)) return false;
  const values = Object.values(extra);
  return values.length <= 16 && values.every((v) => ['string', 'number', 'boolean'].includes(typeof v) && String(v).length <= 256);
}
