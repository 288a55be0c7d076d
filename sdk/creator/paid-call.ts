/**
 * The skill server's one paid-call pipeline (scheme.ts says who decides what): the payment header
 * read once, the scheme chosen by what the payment names among what the route offers, and the
 * pieces every scheme answers with: one handler run, one success body, one 402, one 503.
 */
import {
  encodeBase64Json,
  PAYMENT_REQUIRED_HEADER,
  parsePrice,
  readPaymentEnvelope,
  type PaymentRequired,
  type ReceiptSigningAccount,
} from '../x402/index';
import { SkillTimeoutError } from './errors';
import { failure, toResponse, type StoredResponse } from './http';
import { callSafely, errorText, type CreatorLogger } from './logger';
import { outcomeOf, type RunMarks, type ServerObserver } from './observer';
import { signAnswer } from './receipts';
import { runHandler } from './run';
import type { BaseRoute, PaidRequest, RunOptions, SchemeKit, ServerScheme, SettledCall, SkillRoute, SkillRun } from './scheme';
import { SIWX_HEADER } from '../x402/siwx';
import { tierOf, type Tiers } from './plans/tiers';
import type { TrialGate } from './plans/trial';

export interface PaidCallDeps {
  /** The schemes the server sells through, by id. */
  schemes: ReadonlyMap<string, ServerScheme>;
  /** Told of each answer, with the handler runs' marks of {@link KitDeps.marks}. */
  observe?: { observer: ServerObserver; marks: RunMarks; network: string; logger: CreatorLogger } | undefined;
  /** Free trials (skills defined with `trial`): their sign-in in the 402, and the free calls. */
  trial?: TrialGate | undefined;
  /** The route as a payer buys it (its volume price): a payment of the payer's quoted tier price is taken at it. */
  priced?: ((route: SkillRoute, payer: string) => Promise<SkillRoute>) | undefined;
}

/** Whether a skill's 402 declares the sign-in: it has a free trial or volume prices. */
const signsIn = (route: SkillRoute) => route.skill.trial !== undefined || route.skill.tiers !== undefined;

/** Whether a request signs in without a payment (a free trial call, or a quote of the payer's volume price). */
export const asksTrial = (route: SkillRoute, request: Request) =>
  signsIn(route) && request.headers.has(SIWX_HEADER) && readPaymentEnvelope(request.headers).type === 'none';

/** What the shared pieces need. */
export interface KitDeps {
  logger: CreatorLogger;
  exposeErrors: boolean;
  now: () => number;
  onCall?: ((skillName: string, input: unknown) => unknown) | undefined;
  onError?: ((skillName: string, error: unknown) => unknown) | undefined;
  onSettled?: ((call: SettledCall) => void) | undefined;
  /** Volume prices: a payer's charge, and its paid calls counted. */
  tiers?: Tiers | undefined;
  /** The route of a skill by name (what a settled call is counted against). */
  route?: ((name: string) => BaseRoute | undefined) | undefined;
  /** Where each handler run's end is marked by request, for an observer. */
  marks?: RunMarks | undefined;
  /** Signs a receipt on every paid answer (receipts.ts); none without it. */
  receipts?: ReceiptSigningAccount | undefined;
}

/** Handles `POST /<name>` once the input is known to be valid. */
export async function paidCall(deps: PaidCallDeps, route: SkillRoute, input: unknown, request: Request, ip = 'local'): Promise<Response> {
  const started = performance.now();
  const trial = deps.trial && asksTrial(route, request) ? deps.trial : undefined;
  const chosen = trial
    ? { response: await trial.call(route, input, request, ip), call: undefined }
    : await choose(deps, route, input, request);
  const answer = 'response' in chosen ? withTrial(deps, route, chosen.response, trial !== undefined) : await chosen.scheme.pay(chosen.call);
  const seen = deps.observe;
  if (seen?.observer.call) {
    const scheme = 'scheme' in chosen ? chosen.scheme.id : trial ? 'trial' : 'none';
    callSafely(seen.logger, 'observe', () =>
      seen.observer.call!({
        skill: route.name,
        scheme,
        network: chosen.call?.offer.network ?? seen.network,
        ...outcomeOf(answer.status, answer.body, seen.marks.get(request)),
        seconds: (performance.now() - started) / 1000,
      }),
    );
  }
  return toResponse(answer);
}

/**
 * `GET /<name>`: some clients probe a skill's terms with GET, and some schemes take a payment
 * operation that runs no handler by GET (a refund). Without a payment: the skill's 402, as for
 * POST. A payment whose scheme takes GETs: that scheme. Any other payment: 405, nothing verified or
 * charged (a paid call is a POST with its input).
 */
export async function paidGet(deps: PaidCallDeps, route: SkillRoute, request: Request): Promise<Response> {
  const chosen = await choose(deps, route, {}, request);
  if ('response' in chosen) return toResponse(withTrial(deps, route, chosen.response, false));
  const answer = chosen.scheme.get ? await chosen.scheme.get(chosen.call) : undefined;
  return toResponse(answer ?? failure(405, 'Method not allowed: pay for a skill with POST', {}, { Allow: 'POST' }));
}

/**
 * The route a payment of a skill with volume prices is taken at: the payer's tier route when the
 * scheme names the payer it quoted (`quotedPayer`) and the payment is for that payer's tier price,
 * else the base.
 */
async function tierRoute(deps: PaidCallDeps, route: SkillRoute, scheme: ServerScheme | undefined, payload: Record<string, unknown>) {
  if (!deps.priced || !route.skill.tiers || !scheme?.quotedPayer) return route;
  const accepted = payload.accepted as { amount?: unknown } | undefined;
  const from = scheme.quotedPayer(payload) ?? '';
  if (typeof accepted?.amount !== 'string' || accepted.amount === route.amount.toString() || !/^0x[0-9a-fA-F]{40}$/.test(from))
    return route;
  const priced = await deps.priced(route, from);
  return priced.amount.toString() === accepted.amount ? priced : route;
}

/** A trial skill's 402 declares the sign-in (once: the trial path's own 402s already do). */
function withTrial(deps: PaidCallDeps, route: SkillRoute, answer: StoredResponse, declared: boolean): StoredResponse {
  return deps.trial && signsIn(route) && answer.status === 402 && !declared ? deps.trial.challenge(route, answer) : answer;
}

/** The scheme and the call for a request's payment, or the 402 to answer. */
async function choose(
  deps: PaidCallDeps,
  base: SkillRoute,
  input: unknown,
  request: Request,
): Promise<{ scheme: ServerScheme; call: PaidRequest } | { response: StoredResponse; call?: undefined }> {
  const read = readPaymentEnvelope(request.headers);
  if (read.type === 'none') return { response: paymentRequired(base) };
  if (read.type === 'error') return { response: paymentRequired(base, read.error.message) };
  const route = await tierRoute(deps, base, deps.schemes.get(read.scheme), read.payload);
  const offer = route.offers.get(read.scheme);
  const scheme = offer && deps.schemes.get(read.scheme);
  if (!offer || !scheme) return { response: paymentRequired(route, `Unsupported scheme ${JSON.stringify(read.scheme.slice(0, 32))}`) };
  return { scheme, call: { route, offer, input, request, payload: read.payload } };
}

/**
 * The route's 402: the documented body and `PAYMENT-REQUIRED` with every offer, and `error` in
 * both; `amend` adds fields to the `extra` of one scheme's offer (a corrective state).
 */
export function paymentRequired(
  route: SkillRoute,
  error?: string,
  amend?: { scheme: string; extra: Record<string, unknown> },
): StoredResponse {
  const base = route.terms.paymentRequired;
  const accepts = amend
    ? base.accepts.map((offer) => (offer.scheme === amend.scheme ? { ...offer, extra: { ...offer.extra, ...amend.extra } } : offer))
    : base.accepts;
  const paymentRequired: PaymentRequired = { ...base, accepts, ...(error === undefined ? {} : { error }) };
  return {
    status: 402,
    headers: { 'Content-Type': 'application/json', [PAYMENT_REQUIRED_HEADER]: encodeBase64Json(paymentRequired) },
    body: JSON.stringify(error === undefined ? route.terms.body : { ...route.terms.body, error }),
  };
}

/** The kit every scheme answers with (scheme.ts). */
export function schemeKit(deps: KitDeps): SchemeKit {
  return {
    run: (call, options) => runSkill(deps, call, options),
    required: paymentRequired,
    unavailable: (message) => failure(503, message, {}, { 'Retry-After': '2' }),
    paidAnswer: async (route, settled, result, headers) => {
      const body = JSON.stringify(result);
      const signed = await signBody(deps, route, settled, body, headers);
      return {
        response: { status: 200, headers: { 'Content-Type': 'application/json', ...signed.headers }, body },
        settled: signed.settled,
      };
    },
    signBody: (route, settled, body, headers) => signBody(deps, route, settled, body, headers),
    settled: (call) => {
      callSafely(deps.logger, 'volume prices', () => deps.tiers?.count(call, deps.route?.(call.skill)));
      callSafely(deps.logger, 'call tracking', () => deps.onSettled?.(call));
    },
    now: deps.now,
  };
}

/** The receipts of a paid answer's `body` added to `headers`, and the report carrying the receipt; unsigned when signing fails. */
async function signBody(
  deps: KitDeps,
  route: SkillRoute,
  settled: SettledCall,
  body: string,
  headers: Record<string, string>,
): Promise<{ headers: Record<string, string>; settled: SettledCall }> {
  try {
    const signed = await signAnswer(deps.receipts, route, settled, body, deps.now, headers);
    if (signed) return { headers: signed.headers, settled: { ...settled, receipt: signed.receipt } };
  } catch (error) {
    deps.logger.warn('receipt not signed; answer sent without one', { skill: route.name, error: errorText(error) });
  }
  return { headers, settled };
}

/** One handler run: onCall, the handler under its deadline, onError and the failure answers; nothing is charged on failure. */
async function runSkill(deps: KitDeps, call: PaidRequest, options: RunOptions): Promise<SkillRun> {
  const { route, input, request } = call;
  const { name, skill } = route;
  const price = route.amount;
  // A metered scheme charges the payer's volume price unless the handler says less.
  let charged = options.chargeable && deps.tiers ? await deps.tiers.amountFor(route, options.payer) : price;
  // The tier that priced the call: what it was offered at before the handler said less.
  const tier = tierOf(skill, charged, route.terms.asset.decimals);
  const context = {
    skill: name,
    payer: options.payer,
    request,
    charge(amount: string | bigint) {
      // A scheme that takes the whole price ignores a lower charge; a metered one charges what is said.
      if (!options.chargeable) return;
      const atomic = typeof amount === 'bigint' ? amount : parsePrice(amount, route.terms.asset.decimals);
      if (atomic < 0n || atomic > price) throw new RangeError(`charge ${atomic} is outside 0..${price}, the price of ${name}`);
      charged = atomic;
    },
  };
  callSafely(deps.logger, 'onCall', () => deps.onCall?.(name, input));
  const outcome = await runHandler(skill, input, context, options.timeoutMs);
  const failed = (error: unknown, response: StoredResponse, kind: 'error' | 'timeout' | 'invalid_output'): SkillRun => {
    deps.marks?.set(request, { failed: kind });
    callSafely(deps.logger, 'onError', () => deps.onError?.(name, error));
    return { type: 'failed', response };
  };
  switch (outcome.type) {
    case 'ok':
      deps.marks?.set(request, { charged });
      return {
        type: 'ok',
        body: { success: true, result: outcome.result, timestamp: new Date(deps.now()).toISOString() },
        charged,
        ...(tier === undefined ? {} : { tier }),
      };
    case 'error':
      return failed(
        outcome.error,
        failure(500, deps.exposeErrors ? errorText(outcome.error) || 'Skill failed' : 'Internal server error'),
        'error',
      );
    case 'timeout': {
      const error = new SkillTimeoutError(outcome.timeoutMs);
      return failed(error, failure(504, error.message), 'timeout');
    }
    case 'invalid-output': {
      const error = new Error('Skill result does not match its outputSchema');
      const shown = deps.exposeErrors;
      return failed(
        error,
        failure(500, shown ? error.message : 'Internal server error', shown ? { details: outcome.problems } : {}),
        'invalid_output',
      );
    }
  }
}
