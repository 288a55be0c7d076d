/**
 * The payment terms of a 402 answer, read (PAYMENT-REQUIRED header first, the interface spec's
 * JSON body as fallback) and checked against the registry listing before anything is signed:
 * same network, same payTo, exactly the listed price, an accepted asset with its own EIP-712
 * domain, a bounded validity window.
 */
import {
  decodePaymentRequired,
  formatPrice,
  normalizeNetwork,
  parsePaymentRequirements,
  PAYMENT_REQUIRED_HEADER,
  requirementsFromBody,
  sameAddress,
  type PaymentRequirements,
  type ResourceInfo,
} from '../x402/index';
import { acceptedAsset, amountIn, defaultAsset, type AcceptedAsset } from './assets';
import { MarketError, TermsMismatchError, type TermsField } from './errors';
import { isRecord, parseJson, type Answer } from '../http/exchange';
import type { Skill } from './types';

/** The interface spec's documented window, used for terms built from a listing. */
const LISTING_TIMEOUT_SECONDS = 60;

/** What a 402 answer offers. */
export interface OfferedTerms {
  candidates: unknown[];
  resource: ResourceInfo;
  /** The server's reason, e.g. why a proof was refused. */
  error: string | undefined;
}

/** Terms the client agreed to pay. */
export interface ChosenTerms {
  requirements: PaymentRequirements;
  asset: AcceptedAsset;
}

/** What a client accepts in payment terms: the assets it pays in and the longest authorization it signs. */
export interface TermsPolicy {
  /** Tokens (per network) this client pays in. */
  allowed: readonly AcceptedAsset[];
  /** Longest validity accepted for an authorization, in seconds. */
  maxTimeoutSeconds: number;
}

/**
 * Reads the terms of a 402 answer: the v2 `PAYMENT-REQUIRED` header, or when it is absent or
 * unreadable, the documented body `{accepts: {scheme, price, network, payTo, …}, description}`.
 *
 * @throws MarketError('invalid_response') when neither holds readable terms
 *
 * @example
 * // A page paying through the visitor's wallet instead of SkillMarket's signer:
 * import { checkInput, chooseTerms, readAllowedAssets, readOfferedTerms, resultOf } from 'skill-market';
 * import { encodePaymentPayload, signAuthorization } from 'skill-market/x402';
 *
 * const skill = await market.info('word-count');
 * const body = JSON.stringify({ text: 'one two three' });
 * await checkInput(skill, body);
 * const post = async (headers: Record<string, string>) => {
 *   const r = await fetch(skill.endpoint, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
 *   return { status: r.status, headers: r.headers, text: await r.text() };
 * };
 * const first = await post({});
 * if (first.status === 402) {
 *   const offered = readOfferedTerms(first, skill);
 *   const { requirements } = chooseTerms(offered, skill, { allowed: readAllowedAssets([]), maxTimeoutSeconds: 600 });
 *   const payload = await signAuthorization(visitorAccount, requirements, { resource: offered.resource });
 *   const paid = await post({ 'PAYMENT-SIGNATURE': encodePaymentPayload(payload) });
 *   console.log(resultOf(paid, skill.slug, 'yes', undefined));
 * }
 */
export function readOfferedTerms(answer: Answer, skill: Skill): OfferedTerms {
  const header = answer.headers.get(PAYMENT_REQUIRED_HEADER);
  let headerProblem: string | undefined;
  if (header !== null) {
    try {
      const required = decodePaymentRequired(header);
      return { candidates: required.accepts, resource: required.resource, error: required.error };
    } catch (error) {
      headerProblem = (error as Error).message;
    }
  }
  const parsed = parseJson(answer.text);
  const body = parsed.ok ? parsed.value : undefined;
  try {
    const requirements = requirementsFromBody(body);
    const record = body as Record<string, unknown>;
    const description = typeof record.description === 'string' ? record.description : undefined;
    const error = typeof record.error === 'string' ? record.error : undefined;
    return { candidates: [requirements], resource: description ? { url: skill.endpoint, description } : { url: skill.endpoint }, error };
  } catch (error) {
    const why =
      headerProblem ?? (header === null && !isRecord(body) ? 'no PAYMENT-REQUIRED header and no JSON body' : (error as Error).message);
    throw new MarketError('invalid_response', `${skill.slug} answered 402 without readable payment terms: ${why}`, {
      status: answer.status,
      body: answer.text,
      slug: skill.slug,
    });
  }
}

type Check = { field: TermsField; expected: string; actual: string } | undefined;

/**
 * The first offered terms that match the listing exactly. When none does, the mismatch of the
 * closest candidate is reported.
 *
 * @throws TermsMismatchError naming the field; MarketError('invalid_response') for malformed terms
 *
 * @example
 * const offered = readOfferedTerms(answer402, skill);
 * // TermsMismatchError naming the field when no offer matches the listing (payTo, price, network, asset)
 * const { requirements, asset } = chooseTerms(offered, skill, { allowed: readAllowedAssets([]), maxTimeoutSeconds: 600 });
 * const payload = await signAuthorization(account, requirements, { resource: offered.resource });
 */
export function chooseTerms(offered: OfferedTerms, skill: Skill, policy: TermsPolicy): ChosenTerms {
  let best: { passed: number; problem: NonNullable<Check> } | undefined;
  for (const candidate of offered.candidates) {
    const outcome = checkCandidate(candidate, skill, policy);
    if ('chosen' in outcome) return outcome.chosen;
    if (!best || outcome.passed > best.passed) best = outcome;
  }
  const problem = best?.problem ?? { field: 'scheme' as const, expected: 'exact', actual: 'nothing' };
  throw new TermsMismatchError(problem.field, problem.expected, problem.actual, skill.slug);
}

function checkCandidate(
  candidate: unknown,
  skill: Skill,
  policy: TermsPolicy,
): { chosen: ChosenTerms } | { passed: number; problem: NonNullable<Check> } {
  const c = isRecord(candidate) ? candidate : {};
  const text = (value: unknown) =>
    typeof value === 'string' || typeof value === 'number' ? String(value).slice(0, 80) : JSON.stringify(value ?? null).slice(0, 80);
  const priceMicro = BigInt(skill.priceAtomic);
  let asset: AcceptedAsset | undefined;
  let network: string | undefined;
  const checks: (() => Check)[] = [
    () => (c.scheme === 'exact' ? undefined : { field: 'scheme', expected: 'exact', actual: text(c.scheme) }),
    () => {
      try {
        network = normalizeNetwork(String(c.network));
      } catch {
        network = undefined;
      }
      return network === skill.network ? undefined : { field: 'network', expected: `${skill.network} as listed`, actual: text(c.network) };
    },
    () =>
      typeof c.payTo === 'string' && sameAddress(c.payTo, skill.paymentAddress)
        ? undefined
        : { field: 'payTo', expected: `${skill.paymentAddress} as listed`, actual: text(c.payTo) },
    () => {
      asset = typeof c.asset === 'string' ? acceptedAsset(policy.allowed, skill.network, c.asset) : undefined;
      return asset
        ? undefined
        : { field: 'asset', expected: `USDC or an asset allowed on ${skill.network} (option assets)`, actual: text(c.asset) };
    },
    () => {
      const due = amountIn(asset!, priceMicro);
      if (due !== undefined && c.amount === due.toString()) return undefined;
      const actual =
        typeof c.amount === 'string' && /^\d{1,78}$/.test(c.amount)
          ? `${formatPrice(BigInt(c.amount), asset!.decimals)} (${c.amount} atomic)`
          : text(c.amount);
      return { field: 'price', expected: `${skill.price.replace(/^\$/, '')} (${due ?? '?'} atomic) as listed`, actual };
    },
    () => {
      const extra = isRecord(c.extra) ? c.extra : {};
      const name = asset!.name ?? (typeof extra.name === 'string' && extra.name !== '' ? extra.name : undefined);
      const version = asset!.version ?? (typeof extra.version === 'string' && extra.version !== '' ? extra.version : undefined);
      if (name !== undefined && version !== undefined && extra.name === name && extra.version === version) return undefined;
      return {
        field: 'asset',
        expected: `EIP-712 domain ${asset!.name ?? '?'} v${asset!.version ?? '?'}`,
        actual: `EIP-712 domain ${text(extra.name)} v${text(extra.version)}`,
      };
    },
    () => {
      const seconds = c.maxTimeoutSeconds;
      if (typeof seconds === 'number' && Number.isInteger(seconds) && seconds >= 1 && seconds <= policy.maxTimeoutSeconds) return undefined;
      return {
        field: 'maxTimeoutSeconds',
        expected: `at most ${policy.maxTimeoutSeconds} (option maxTimeoutSeconds)`,
        actual: text(seconds),
      };
    },
  ];
  for (const [passed, check] of checks.entries()) {
    const problem = check();
    if (problem) return { passed, problem };
  }
  let requirements: PaymentRequirements;
  try {
    requirements = parsePaymentRequirements(candidate);
  } catch (error) {
    throw new MarketError('invalid_response', `${skill.slug} offered malformed payment terms: ${(error as Error).message}`, {
      status: 402,
      slug: skill.slug,
    });
  }
  return { chosen: { requirements, asset: asset! } };
}

/**
 * Terms built from the listing alone, for fast mode: the listed network, payTo and price in the
 * default asset, the documented 60 s window. Undefined when the asset's EIP-712 domain is unknown.
 */
export function listingTerms(skill: Skill, policy: TermsPolicy): ChosenTerms | undefined {
  const asset = defaultAsset(policy.allowed, skill.network);
  if (!asset || asset.name === undefined || asset.version === undefined) return undefined;
  const amount = amountIn(asset, BigInt(skill.priceAtomic));
  if (amount === undefined) return undefined;
  const requirements: PaymentRequirements = {
    scheme: 'exact',
    network: skill.network,
    amount: amount.toString(),
    asset: asset.address,
    payTo: skill.paymentAddress,
    maxTimeoutSeconds: Math.min(LISTING_TIMEOUT_SECONDS, policy.maxTimeoutSeconds),
    extra: { name: asset.name, version: asset.version },
  };
  return { requirements, asset };
}
