/**
 * The payment terms of a 402 answer, read (PAYMENT-REQUIRED header first, the marketplace's
 * JSON body as fallback) and checked against the registry listing before anything is signed: a
 * scheme the client pays, the same network, the same payTo, an accepted asset, exactly the listed
 * price; then the scheme's own checks (for `exact`: the asset's EIP-712 domain and a bounded
 * validity window).
 */
import { MarketError } from '../http/errors';
import { isRecord, parseJson, type Answer } from '../http/exchange';
import type { Skill } from '../registry/read';
import {
  decodePaymentRequired,
  formatPrice,
  normalizeNetwork,
  PAYMENT_REQUIRED_HEADER,
  requirementsFromBody,
  sameAddress,
  type ResourceInfo,
} from '../x402/index';
import { acceptedAsset, amountIn, type AcceptedAsset } from './assets';
import { text } from './checks';
import { TermsMismatchError } from './errors';
import { exactScheme } from './schemes/exact';
import type { ChosenTerms, PaymentScheme, Terms, TermsPolicy, TermsProblem } from './scheme';

/** What a 402 answer offers. */
export interface OfferedTerms {
  candidates: unknown[];
  resource: ResourceInfo;
  /** The server's reason, e.g. why a proof was refused. */
  error: string | undefined;
  /** The x402 extensions the 402 declares (its `extensions`), echoed in the payment; none for the documented body. */
  extensions?: Record<string, unknown>;
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
      const offered: OfferedTerms = { candidates: required.accepts, resource: required.resource, error: required.error };
      if (required.extensions) offered.extensions = required.extensions;
      return offered;
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

/** The `exact` scheme, for {@link chooseTerms}. */
let exact: readonly PaymentScheme[] | undefined;

/**
 * The first offered terms that match the listing exactly, in the `exact` scheme. When none does,
 * the mismatch of the closest candidate is reported.
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
  exact ??= [exactScheme()];
  return chooseAmong(offered.candidates, skill, policy, exact).terms as ChosenTerms;
}

/** Terms chosen for a call, and the scheme that pays them. */
export interface Choice {
  terms: ChosenTerms<Terms>;
  scheme: PaymentScheme;
}

/**
 * The first candidate that matches the listing and that one of `schemes` accepts, trying the
 * schemes in the client's order of preference and, for each, the candidates in the server's
 * order. When none does, the mismatch of the closest candidate is reported.
 *
 * @throws TermsMismatchError naming the field; MarketError('invalid_response') for malformed terms
 */
export function chooseAmong(candidates: readonly unknown[], skill: Skill, policy: TermsPolicy, schemes: readonly PaymentScheme[]): Choice {
  let best: { passed: number; problem: TermsProblem } | undefined;
  const consider = (candidate: unknown, scheme: PaymentScheme | undefined) => {
    const outcome = checkCandidate(candidate, skill, policy, scheme, schemes);
    if ('terms' in outcome) return outcome.terms;
    if (!best || outcome.passed > best.passed) best = outcome;
    return undefined;
  };
  for (const scheme of schemes) {
    for (const candidate of candidates) {
      if (!isRecord(candidate) || candidate.scheme !== scheme.id) continue;
      const terms = consider(candidate, scheme);
      if (terms) return { terms, scheme };
    }
  }
  for (const candidate of candidates) {
    if (!isRecord(candidate) || !schemes.some((s) => s.id === candidate.scheme)) consider(candidate, undefined);
  }
  const problem = best?.problem ?? { field: 'scheme' as const, expected: schemeNames(schemes), actual: 'nothing' };
  throw new TermsMismatchError(problem.field, problem.expected, problem.actual, skill.slug);
}

const schemeNames = (schemes: readonly PaymentScheme[]) => schemes.map((s) => s.id).join(' or ');

/**
 * The listing's checks of one candidate (scheme, network, payTo, asset, price, in that order),
 * then the scheme's own; how many passed before the first problem.
 */
function checkCandidate(
  candidate: unknown,
  skill: Skill,
  policy: TermsPolicy,
  scheme: PaymentScheme | undefined,
  schemes: readonly PaymentScheme[],
): { terms: ChosenTerms<Terms> } | { passed: number; problem: TermsProblem } {
  const c = isRecord(candidate) ? candidate : {};
  let asset: AcceptedAsset | undefined;
  const checks: (() => TermsProblem | undefined)[] = [
    () => (scheme ? undefined : { field: 'scheme', expected: schemeNames(schemes), actual: text(c.scheme) }),
    () => {
      let network: string | undefined;
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
      const due = amountIn(asset!, BigInt(skill.priceAtomic));
      if (due !== undefined && c.amount === due.toString()) return undefined;
      // A listed volume price: the server quotes it to a payer that signed in and reached it.
      for (const step of skill.tiers?.steps ?? [])
        if (c.amount === amountIn(asset!, BigInt(step.priceAtomic))?.toString()) return undefined;
      const actual =
        typeof c.amount === 'string' && /^\d{1,78}$/.test(c.amount)
          ? `${formatPrice(BigInt(c.amount), asset!.decimals)} (${c.amount} atomic)`
          : text(c.amount);
      return { field: 'price', expected: `${skill.price.replace(/^\$/, '')} (${due ?? '?'} atomic) as listed`, actual };
    },
  ];
  for (const [passed, check] of checks.entries()) {
    const problem = check();
    if (problem) return { passed, problem };
  }
  const accepted = scheme!.accepts(c, { skill, policy, asset: asset! });
  if (!accepted.ok) return { passed: checks.length + accepted.passed, problem: accepted.problem };
  return { terms: { requirements: accepted.requirements, asset: asset! } };
}
