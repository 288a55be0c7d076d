/**
 * Free trials: a skill defined with `trial: { calls, period }` gives each payer wallet that many
 * calls per period without payment. Its 402 declares the x402 `sign-in-with-x` extension with a
 * fresh nonce; the payer signs that EIP-4361 message with its wallet and sends it back in
 * `SIGN-IN-WITH-X` (no payment header). The server checks the message names this server and this
 * skill, that its nonce is one it issued for the skill and unused (each is taken once), that it is
 * recent (issued at most `maxAgeSeconds` ago, not expired) and that the wallet signed it; then,
 * when the wallet has a call left in the period and its IP address has not brought too many new
 * wallets, the handler runs free and the answer says `X-Trial-Calls-Left`. Otherwise the answer is
 * the skill's 402, whose `error` says why (used up: with `X-Trial-Resets-At`, the period's end): the
 * payer pays as usual.
 */
import { type Address, encodeBase64Json, decodeBase64Json, PAYMENT_REQUIRED_HEADER } from '../../x402/index';
import { parseSiwxHeader, SIWX_EXTENSION, SIWX_HEADER, siwxDeclaration, verifySiwxSignature } from '../../x402/siwx';
import { jsonAnswer, type StoredResponse } from '../http';
import type { SchemeKit, SkillRoute } from '../scheme';
import { periodEnd } from './period';
import type { TrialStore, TrialUse } from './store';

/** How long a signed sign-in is good for by default: 5 minutes. */
const DEFAULT_TRIAL_MAX_AGE_SECONDS = 300;
/** New trial wallets one client IP address may bring per skill and period by default. */
const DEFAULT_TRIAL_IP_WALLETS = 3;
/** Nonces waiting for their sign-in at most; beyond it the oldest is forgotten. */
const MAX_OPEN_NONCES = 10_000;
/** Leeway for a client clock a little ahead of ours, ms. */
const CLOCK_SKEW_MS = 60_000;

/** The trial answer header: free calls the wallet has left in the period. */
const TRIAL_CALLS_LEFT_HEADER = 'X-Trial-Calls-Left';
/** On the 402 of a wallet whose free calls are used up: when the period ends (ISO 8601), and they come back. */
const TRIAL_RESETS_AT_HEADER = 'X-Trial-Resets-At';

export interface TrialGateOptions {
  store: TrialStore;
  kit: SchemeKit;
  now: () => number;
  maxAgeSeconds?: number;
  ipWallets?: number;
  /** The route as `payer` buys it: at its volume price (skills with tiers). */
  priced?: (route: SkillRoute, payer: Address) => Promise<SkillRoute>;
}

export interface TrialGate {
  /** A trial skill's 402 with the sign-in declared (a fresh nonce). */
  challenge(route: SkillRoute, answer: StoredResponse): StoredResponse;
  /**
   * A call carrying `SIGN-IN-WITH-X` (no payment) of a skill with a trial or volume prices: the free
   * run, or the 402 saying why not; a skill without a trial answers the 402 quoting the signed-in
   * payer its volume price.
   */
  call(route: SkillRoute, input: unknown, request: Request, ip: string): Promise<StoredResponse>;
  close(): Promise<void>;
}

const randomNonce = () => [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');

export function createTrialGate(options: TrialGateOptions): TrialGate {
  const { store, kit, now } = options;
  const maxAgeMs = (options.maxAgeSeconds ?? DEFAULT_TRIAL_MAX_AGE_SECONDS) * 1000;
  const ipWallets = options.ipWallets ?? DEFAULT_TRIAL_IP_WALLETS;
  /** Nonces issued and not yet used: the resource each was issued for and when it expires. */
  const open = new Map<string, { resource: string; expires: number }>();

  const issue = (resource: string): string => {
    const at = now();
    for (const [nonce, entry] of open) {
      if (open.size < MAX_OPEN_NONCES && entry.expires > at) break;
      open.delete(nonce);
    }
    const nonce = randomNonce();
    open.set(nonce, { resource, expires: at + maxAgeMs });
    return nonce;
  };

  const challenge = (route: SkillRoute, answer: StoredResponse): StoredResponse => {
    const header = answer.headers[PAYMENT_REQUIRED_HEADER];
    const { trial, tiers } = route.skill;
    if (!header || !(trial || tiers)) return answer;
    const required = decodeBase64Json(header, 'malformed_payment_required', 'PAYMENT-REQUIRED') as Record<string, unknown>;
    const resource = route.terms.paymentRequired.resource.url;
    const at = now();
    const info = {
      domain: new URL(resource).host,
      uri: resource,
      version: '1',
      nonce: issue(resource),
      issuedAt: new Date(at).toISOString(),
      expirationTime: new Date(at + maxAgeMs).toISOString(),
      statement: trial
        ? `Free trial of ${route.name}: ${trial.calls} call${trial.calls === 1 ? '' : 's'} a ${trial.period} per wallet`
        : `Sign in to be quoted your volume price of ${route.name}`,
      resources: [resource],
    };
    const extensions = {
      ...(required.extensions as Record<string, unknown> | undefined),
      [SIWX_EXTENSION]: siwxDeclaration(info, route.terms.requirements.network),
    };
    return { ...answer, headers: { ...answer.headers, [PAYMENT_REQUIRED_HEADER]: encodeBase64Json({ ...required, extensions }) } };
  };

  /** The 402 with a reason, and a fresh sign-in. */
  const refuse = (route: SkillRoute, error: string) => challenge(route, kit.required(route, error));

  /** The wallet that signed a request's sign-in for `route` (its nonce taken), or the 402 saying why not. */
  const signedIn = async (
    route: SkillRoute,
    request: Request,
  ): Promise<{ payer: Address; nonce: string } | { refused: StoredResponse }> => {
    let payload: ReturnType<typeof parseSiwxHeader>;
    try {
      payload = parseSiwxHeader(request.headers.get(SIWX_HEADER) ?? '');
    } catch (error) {
      return { refused: refuse(route, (error as Error).message) };
    }
    const resource = route.terms.paymentRequired.resource.url;
    const at = now();
    const issued = Date.parse(payload.issuedAt);
    const problem =
      payload.domain !== new URL(resource).host
        ? 'Sign-in refused: its domain is not this server'
        : payload.uri !== resource
          ? 'Sign-in refused: its uri is not this skill'
          : payload.chainId !== route.terms.requirements.network
            ? 'Sign-in refused: its chain is not the skill’s network'
            : !Number.isFinite(issued) || issued > at + CLOCK_SKEW_MS || at - issued > maxAgeMs
              ? 'Sign-in refused: it expired (sign the fresh one of this 402)'
              : payload.expirationTime !== undefined && !(Date.parse(payload.expirationTime) > at)
                ? 'Sign-in refused: it expired (sign the fresh one of this 402)'
                : payload.notBefore !== undefined && !(Date.parse(payload.notBefore) <= at + CLOCK_SKEW_MS)
                  ? 'Sign-in refused: it is not valid yet'
                  : undefined;
    if (problem) return { refused: refuse(route, problem) };
    if (!(await verifySiwxSignature(payload))) return { refused: refuse(route, 'Sign-in refused: the signature is not the wallet’s') };
    const opened = open.get(payload.nonce);
    // Taken once, whatever happens next: a sign-in is never good twice.
    if (!opened || opened.resource !== resource || opened.expires <= now())
      return { refused: refuse(route, 'Sign-in refused: its nonce is unknown or already used (sign the fresh one of this 402)') };
    open.delete(payload.nonce);
    return { payer: payload.address, nonce: payload.nonce };
  };

  /** The 402 quoting `payer` its own price (its volume price), with `error`. */
  const quoted = async (route: SkillRoute, payer: Address, error?: string) => {
    const priced = options.priced ? await options.priced(route, payer) : route;
    return challenge(priced, kit.required(priced, error));
  };

  return {
    challenge,
    async call(route, input, request, ip) {
      const trial = route.skill.trial;
      const who = await signedIn(route, request);
      if ('refused' in who) return who.refused;
      if (!trial) return quoted(route, who.payer);
      const at = now();
      const payload = { address: who.payer, nonce: who.nonce };

      const use: TrialUse = {
        skill: route.name,
        wallet: payload.address.toLowerCase(),
        ip,
        until: periodEnd(trial.period, at),
        calls: trial.calls,
        ipWallets,
      };
      const taken = await store.take(use).catch((error: unknown) => error as Error);
      if (taken instanceof Error) return kit.unavailable(`Trial calls cannot be counted now: ${taken.message}`);
      if (taken.type === 'used-up') {
        const answer = await quoted(
          route,
          who.payer,
          `Free trial used: ${trial.calls} call${trial.calls === 1 ? '' : 's'} a ${trial.period} per wallet. Pay to call again`,
        );
        return { ...answer, headers: { ...answer.headers, [TRIAL_RESETS_AT_HEADER]: new Date(use.until).toISOString() } };
      }
      if (taken.type === 'ip-limit')
        return quoted(route, who.payer, 'Free trial refused: too many trial wallets from this address in this period. Pay to call');

      const run = await kit.run(
        { route, offer: [...route.offers.values()][0]!, input, request, payload: {} },
        {
          payer: payload.address,
          timeoutMs: route.skill.timeout,
          chargeable: false,
        },
      );
      if (run.type === 'failed') {
        await store.giveBack(use).catch(() => undefined);
        return run.response;
      }
      kit.settled({
        skill: route.name,
        scheme: 'trial',
        amount: '0',
        amountAtomic: '0',
        payer: payload.address,
        transaction: '',
        nonce: payload.nonce,
        network: route.terms.requirements.network,
      });
      return jsonAnswer(200, run.body, { [TRIAL_CALLS_LEFT_HEADER]: String(taken.left) });
    },
    close: () => store.close(),
  };
}
