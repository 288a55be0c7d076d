/**
 * The terms a listing shows in discovery: what the skill's 402 asks. The skill server reports its
 * offers in its /health answer (`accepts` by skill name; the health probe keeps them); they are
 * listed only when their `exact` offer is the listing's own terms (payee, network, token, exactly
 * the price), with the server's payment window, and the `batch-settlement` offer beside it when it
 * has one on the same terms and a well-formed channel `extra`. Otherwise the listing's own `exact`
 * terms stand alone.
 */
import { getAddress } from 'viem';
import { type AnyPaymentRequirements, parseBatchRequirements, parseBatchRequirementsExtra } from 'skill-market/x402';

const MAX_TIMEOUT_SECONDS = 31_536_000;

/** The accepts to list for the listing's `exact` requirements, given what its server reported (undefined: nothing). */
export function listedAccepts(exact: AnyPaymentRequirements, reported: readonly unknown[] | undefined): AnyPaymentRequirements[] {
  const same = (offer: Record<string, unknown>, scheme: string) =>
    offer.scheme === scheme &&
    offer.network === exact.network &&
    offer.amount === exact.amount &&
    typeof offer.asset === 'string' &&
    offer.asset.toLowerCase() === exact.asset.toLowerCase() &&
    typeof offer.payTo === 'string' &&
    offer.payTo.toLowerCase() === exact.payTo.toLowerCase() &&
    Number.isInteger(offer.maxTimeoutSeconds) &&
    (offer.maxTimeoutSeconds as number) >= 1 &&
    (offer.maxTimeoutSeconds as number) <= MAX_TIMEOUT_SECONDS;
  const offers = (reported ?? []).filter((o): o is Record<string, unknown> => typeof o === 'object' && o !== null);
  const asked = offers.find((o) => same(o, 'exact'));
  if (!asked) return [exact];
  const listed: AnyPaymentRequirements[] = [{ ...exact, maxTimeoutSeconds: asked.maxTimeoutSeconds as number }];
  const channel = offers.find((o) => same(o, 'batch-settlement'));
  const extra = channel ? channelExtra(channel) : undefined;
  if (channel && extra)
    listed.push({ ...exact, scheme: 'batch-settlement', maxTimeoutSeconds: channel.maxTimeoutSeconds as number, extra });
  return listed;
}

/** The channel's `extra`, rebuilt from its checked fields alone (the EIP-712 domain, authorizer, delay, least deposit). */
function channelExtra(offer: Record<string, unknown>): Record<string, unknown> | undefined {
  try {
    parseBatchRequirements(offer);
    const { receiverAuthorizer, withdrawDelay, name, version, minDeposit } = parseBatchRequirementsExtra(offer.extra);
    return {
      receiverAuthorizer: getAddress(receiverAuthorizer),
      withdrawDelay,
      name,
      version,
      ...(minDeposit !== undefined ? { minDeposit } : {}),
    };
  } catch {
    return undefined;
  }
}
