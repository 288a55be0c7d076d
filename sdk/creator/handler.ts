/**
 * The skill server as one fetch-style function, `(Request) => Promise<Response>`: `GET /health`,
 * `POST /<skillName>` (without a payment its 402, whatever the body; with one, validated input, then
 * the paid call), `GET /<skillName>` (the same 402, or a payment channel's cooperative refund), the
 * documents for crawlers (`/`, `/favicon.svg`, `/.well-known/x402`, `/openapi.json`: discovery/routes.ts),
 * CORS preflights; any other method is 405 with `Allow`. It runs in any runtime with the Fetch API;
 * `serve()` puts it on a port, tests call it in process.
 */
import { validateAgainst } from '../json-schema/index';
import {
  buildPaymentTerms,
  createAuthorizationStateReader,
  DEFAULT_MAX_TIMEOUT_SECONDS,
  DEFAULT_NETWORK,
  formatPriceUsd,
  parseCaip2,
  parsePrice,
  resolveAsset,
  type AssetInfo,
  type PaymentTerms,
  type ReceiptSigningAccount,
} from '../x402/index';
import { ServeConfigError } from './errors';
import { createFacilitatorClient } from './facilitator-client';
import { corsPolicy, type CorsOption } from './cors';
import { failure, jsonAnswer, parseJsonBody, readBodyText, toResponse } from './http';
import { consoleLogger, errorText, type CreatorLogger } from './logger';
import type { ChannelBacklog, RunMarks, ServerObserver } from './observer';
import { asksTrial, paidCall, paidGet, schemeKit } from './paid-call';
import { createTrialGate, type TrialGate } from './plans/trial';
import { lazyTrialStore, type TrialStore } from './plans/store';
import { createTiers } from './plans/tiers';
import type { BaseRoute, Offer, ServerScheme, ServerSchemeFactory, SettledCall, SkillRoute } from './scheme';
import { isProduction, processEnv } from './settings';
import { isSkill, withPlans, type Skill, type Skills, type TierStep, type Trial } from './skill';
import type { Period } from './plans/period';
import { declarationOf } from './discovery/bazaar';
import { openApiSettings, type OpenApiOptions } from './discovery/publish';
import { DOCUMENT_METHODS, isPublished, publishedAnswer, type PublishedSite } from './discovery/routes';
import { clientAddress } from '../http/client-address';
import { requestPath } from '../http/request-path';
import { createChannelReader } from '../x402/channel-reader';
import { createExactScheme } from './schemes/exact/index';
import { createExposure, settlementSettings, type SettlementOption } from './schemes/exact/exposure';
import { createProofLedger, type LedgerOptions } from './schemes/exact/ledger';
import { createPayerTrust, verifyMode, type VerifyMode } from './schemes/exact/payers';
import { createSettlementWatcher } from './schemes/exact/settlement';
import { createChannelScheme, type ChannelScheme } from './schemes/channel/index';
import { createUptoScheme } from './schemes/upto/index';
import type { ClaimRound } from './schemes/channel/claims';
import { channelSettings, type ChannelOption } from './schemes/channel/settings';

/**
 * Default facilitator: `market facilitator` on this machine.
 *
 * @example
 * await serve({ wordCount }, { facilitatorUrl: process.env.FACILITATOR_URL ?? DEFAULT_FACILITATOR_URL });
 */
export const DEFAULT_FACILITATOR_URL = 'http://localhost:3001';
/**
 * Default app name, shown by `/health` and sent as the User-Agent.
 *
 * @example
 * await serve({ wordCount }, { appName: 'word tools' }); // shown by GET /health instead of DEFAULT_APP_NAME
 */
export const DEFAULT_APP_NAME = 'skill-market skill server';
/**
 * Default largest request body: 1 MiB.
 *
 * @example
 * await serve({ summarize }, { maxBodyBytes: 4 * DEFAULT_MAX_BODY_BYTES }); // accept 4 MiB inputs
 */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * Default `holdMs`: 30 s. Covers a facilitator that answered `settlement_pending` after its
 * receipt wait (10 s by default) and a restart of a facilitator, and stays well inside what clients
 * wait for an answer (the SDK client gives a request 60 s; the reference x402 clients send a paid
 * request once and read whatever comes back).
 *
 * @example
 * await serve({ wordCount }, { holdMs: 2 * DEFAULT_HOLD_MS }); // hold paid requests up to a minute
 */
export const DEFAULT_HOLD_MS = 30_000;
/** Longest `holdMs`: a request must end before the server closes its connection as idle. */
const MAX_HOLD_MS = 120_000;

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const RESERVED = new Set(['health']);

/** Options of {@link createSkillHandler}; `serve()` fills them from its own options and the environment. */
export interface SkillHandlerOptions {
  /** Address that receives the payments (payTo). Required. */
  payTo: string;
  /** Default `http://localhost:3001`. */
  facilitatorUrl?: string;
  /** Key for a facilitator that requires one (our `FACILITATOR_API_KEYS`). */
  facilitatorApiKey?: string;
  /** CAIP-2 payment network; default `eip155:8453` (Base mainnet). */
  network?: string;
  /** Token to be paid in; default the network's USDC (required on chains without one, e.g. a local anvil). */
  asset?: AssetInfo;
  /** Public base URL, used for the `resource` of the payment terms; default `http://localhost:3002`. */
  publicUrl?: string;
  /** Default {@link DEFAULT_APP_NAME}. */
  appName?: string;
  /** Called before each handler run with the skill name and input. Errors it throws are logged, never sent. */
  onCall?: (skillName: string, input: unknown) => unknown;
  /** Called on each handler error (also timeouts and results failing the outputSchema). */
  onError?: (skillName: string, error: unknown) => unknown;
  /** Called after each settled payment (serve() uses it for call tracking). */
  onSettled?: (call: SettledCall) => void;
  /** Told of each paid call's outcome and each channel claim and settle (metrics); see {@link ServerObserver}. */
  observe?: ServerObserver;
  /**
   * Keep each channel call's record with its channel until {@link SkillRequestHandler.callRecordDelivered}
   * says the registry has it, so a crash loses none (serve() does when it tracks calls); default false.
   */
  keepCallRecords?: boolean;
  /** Send handler error messages to clients; default true unless NODE_ENV is `production`. */
  exposeErrors?: boolean;
  /** Largest request body in bytes; default 1 MiB (larger: 413). */
  maxBodyBytes?: number;
  /** Used for facilitator calls; default the global fetch. */
  fetch?: typeof fetch;
  /** Free trials: where they are counted and their bounds; see {@link TrialOptions}. */
  trials?: TrialOptions;
  logger?: CreatorLogger;
  /** Bounds of the single-use and replay memory. */
  replay?: LedgerOptions;
  /**
   * JSON-RPC URL of the payment network. Optional: when a settlement's outcome is unknown, the
   * chain (`authorizationState`) is asked besides the facilitator, so a result is released (or the
   * proof declared dead) even when the facilitator cannot tell.
   */
  rpcUrl?: string;
  /** Clock in ms; default Date.now. */
  now?: () => number;
  /**
   * Longest a paid request waits for a payment whose outcome is still open (the settle answered
   * `settlement_pending`, or its answer was lost), and a second copy of a proof for the first's
   * answer, ms; default {@link DEFAULT_HOLD_MS}. It is answered the result (with `PAYMENT-RESPONSE`)
   * or the 402 as soon as the outcome is known; past the bound, 409 `payment_pending`. With
   * `rpcUrl`, a request is held longer when needed: until the outcome is final (the transfer
   * mined, or the authorization expired unmined), so a client that reads one answer is never left
   * charged without the result.
   */
  holdMs?: number;
  /**
   * When a paid call's result leaves: `broadcast` (default) once the facilitator has broadcast the
   * transfer, within caps of unconfirmed value per payer and per skill (`{ mode, maxUnconfirmedPerPayer,
   * maxUnconfirmedPerSkill }`, prices; default $1 and $10); `confirmed` once it is mined.
   */
  settlement?: SettlementOption;
  /**
   * When the facilitator verifies a payment: `at-settlement` (default) verifies a payer who already
   * paid this server in the settle itself, one round trip less per call; `first` calls /verify
   * before every handler run (for expensive handlers or ones with side effects). See {@link VERIFY_MODES}.
   */
  verify?: VerifyMode;
  /**
   * Calls from web pages (CORS). Default `true`: any origin may call and read the x402 headers
   * (skills are public paid APIs without cookies). `{ origins: ['https://app.example'] }` allows
   * only those origins; `false` sends no CORS headers. See {@link CorsOption}.
   */
  cors?: CorsOption;
  /**
   * Payment channels (x402 `batch-settlement`) offered beside `exact`; see {@link ChannelOption}.
   * Default: for skills priced below $0.01, once the receiver authorizer is known (the
   * `receiverAuthorizerKey` option, or {@link receiverAuthorizer}).
   */
  channels?: ChannelOption;
  /** The facilitator's receiver authorizer (its `/supported` `extra.receiverAuthorizer` for the scheme). */
  receiverAuthorizer?: string;
  /**
   * The facilitator's address that settles `upto` payments (its `/supported` `extra.facilitatorAddress`
   * for the scheme): skills defined with `upto: true` offer the scheme once it is known.
   */
  uptoFacilitator?: string;
  /**
   * Name catalogues show for this server (the 402's `resource.serviceName`, x402 `bazaar`): printable
   * ASCII, at most 32 characters. Default none (`serve()`: its `appName` when one is given).
   */
  serviceName?: string;
  /** Icon catalogues show (`resource.iconUrl`); sent only when it is https at a named host. Default none. */
  iconUrl?: string;
  /** Groups every skill is listed under besides its own (`register.groups`); with them, the 402's `resource.tags`. */
  groups?: readonly string[];
  /**
   * What `/openapi.json` says beyond the skills: `contact` (default: the server's name and public
   * URL) and `guidance` for agents (default: generated). See {@link OpenApiOptions}.
   */
  openapi?: OpenApiOptions;
  /**
   * @internal Schemes sold besides `exact` and payment channels, after them in the 402's `accepts`,
   * each built with what the built-in schemes get. For schemes made up by tests
   * (test/support/schemes/): not part of the published API.
   */
  extraSchemes?: readonly ServerSchemeFactory[];
  /** Signs a receipt on every paid answer (a viem local account of the receipt key; see receipts.ts); default none. */
  receiptSigner?: ReceiptSigningAccount;
}

/** A client's IP address, or a server that tells it by request (Bun's). */
export type Peer = string | { requestIP(request: Request): { address: string } | null };

const peerIp = (request: Request, peer: Peer | undefined): string =>
  typeof peer === 'string'
    ? peer
    : ((peer && typeof peer.requestIP === 'function' ? peer.requestIP(request)?.address : undefined) ?? 'local');

/** Where the free trial calls are counted by default, relative to the working directory. */
const DEFAULT_TRIAL_FOLDER = '.market/trials';

/** Free trials of a skill server (`serve({ trials })`). */
export interface TrialOptions {
  /** Where trial calls are counted: a folder (default `.market/trials`) or a store. */
  store?: string | TrialStore;
  /** How long a signed sign-in is good for, seconds; default 300. */
  maxAgeSeconds?: number;
  /** New trial wallets one client IP address may bring per skill and period; default 3. */
  ipWallets?: number;
  /**
   * Addresses of the proxies in front of the server (a load balancer, a CDN): a request from one of
   * them counts for the client its `X-Forwarded-For` names (the rightmost entry that is not itself a
   * trusted proxy). Default none: the socket peer is the client, and `X-Forwarded-For` is ignored.
   */
  trustedProxies?: readonly string[];
}

/** The fetch-style skill server. */
export interface SkillRequestHandler {
  /**
   * Answers one request; never throws. `peer` is the client's IP address, or a server that knows it
   * (Bun's, as `Bun.serve({ fetch: app.fetch })` passes it): what bounds the free trial wallets per
   * address. Default `local`.
   */
  fetch(request: Request, peer?: Peer): Promise<Response>;
  /** Skill names, in definition order. */
  readonly names: readonly string[];
  /** The payment terms of a skill (what its 402 offers). */
  termsOf(name: string): PaymentTerms | undefined;
  /**
   * Changes what a skill asks from the next request on (calls in flight keep their terms): how
   * `serve()` follows the price of the skill's listing. Answers whether the terms changed (false
   * for the same price or an unknown name).
   *
   * @throws ServeConfigError when the price cannot be parsed
   */
  setPrice(name: string, price: string): boolean;
  /**
   * Changes a skill's free trial and volume prices from the next request on (undefined removes
   * one), its 402's sign-in declaration included: how `serve()` follows its listing's. Answers
   * whether they changed (false for the same ones or an unknown name).
   *
   * @throws ServeConfigError when a value is invalid
   */
  setPlans(name: string, plans: { trial?: Trial | undefined; tiers?: { period: Period; steps: readonly TierStep[] } | undefined }): boolean;
  /** Offers channels with this receiver authorizer from now on (serve() passes the facilitator's once known). */
  useReceiverAuthorizer(address: string): void;
  /** Offers `upto` (to skills defined with it) naming this facilitator address from now on (serve() passes the facilitator's once known). */
  useUptoFacilitator(address: string): void;
  /** Claims and settles now every channel with an unclaimed charge (`all`), or only those due; none without channels. */
  claimChannels(all?: boolean): Promise<ClaimRound>;
  /** What the payment channels owe not yet claimed or settled; undefined without channels. */
  channelBacklog(): Promise<ChannelBacklog | undefined>;
  /**
   * The channel call records kept for the registry (with `keepCallRecords`: those an earlier run did
   * not deliver). Rejects with a ChannelStoreDamagedError when the channel store is damaged.
   */
  keptCallRecords(): Promise<SettledCall[]>;
  /** The registry has this call's record (or refused it for good): a channel keeps it no longer. */
  callRecordDelivered(call: SettledCall): void;
  /** Stops the claims and the confirmation checks, and releases the channel store. */
  close(): Promise<void>;
}

/**
 * Builds the request handler for a map of skills. Throws a {@link ServeConfigError} for an empty
 * map (`no skills provided`), a name that cannot be a path segment, a value that is not a skill,
 * or `cors.origins` that are not origins.
 *
 * @example
 * const app = createSkillHandler({ echo }, { payTo: '0x…', facilitatorUrl: 'http://localhost:3001' });
 * Bun.serve({ port: 3002, fetch: app.fetch });
 */
export function createSkillHandler(skills: Skills, options: SkillHandlerOptions): SkillRequestHandler {
  const plain = buildRoutes(skills, options);
  const decimals = [...plain.values()][0]?.terms.asset.decimals ?? 6;
  const channels = channelSettings(options.channels, decimals);
  const holdMs = holdOption(options.holdMs);
  const logger = options.logger ?? consoleLogger;
  const appName = options.appName ?? DEFAULT_APP_NAME;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const now = options.now ?? Date.now;
  const facilitator = createFacilitatorClient({
    url: options.facilitatorUrl ?? DEFAULT_FACILITATOR_URL,
    userAgent: appName,
    ...(options.facilitatorApiKey ? { apiKey: options.facilitatorApiKey } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const marks: RunMarks = new WeakMap();
  // Always there (opened at first use): a listing may give any skill a trial or volume prices later.
  const plans: TrialStore =
    typeof options.trials?.store === 'object'
      ? options.trials.store
      : lazyTrialStore(options.trials?.store ?? DEFAULT_TRIAL_FOLDER, { now });
  const tiers = createTiers({ store: plans, now, warn: (message) => logger.warn(message) });
  const kit = schemeKit({
    ...(options.observe ? { marks } : {}),
    tiers,
    route: (name) => plain.get(name),
    logger,
    exposeErrors: options.exposeErrors ?? !isProduction(processEnv()),
    now,
    onCall: options.onCall,
    onError: options.onError,
    onSettled: options.onSettled,
    receipts: options.receiptSigner,
  });
  const ledger = createProofLedger({ ...options.replay, ...(options.now ? { now: options.now } : {}) });
  const exposure = createExposure({
    settings: settlementSettings(options.settlement, decimals),
    facilitator,
    logger,
    ...(options.now ? { now: options.now } : {}),
  });
  const exact = createExactScheme({
    kit,
    facilitator,
    ledger,
    exposure,
    payers: createPayerTrust(verifyMode(options.verify)),
    settlements: createSettlementWatcher({
      facilitator,
      ledger,
      logger,
      chain: options.rpcUrl ? createAuthorizationStateReader(options.rpcUrl, options.fetch ? { fetch: options.fetch } : {}) : undefined,
      onSettled: kit.settled,
      sign: kit.signBody,
      ...(options.now ? { now: options.now } : {}),
    }),
    logger,
    holdMs,
    holdUntilFinal: options.rpcUrl !== undefined,
  });
  const channel: ChannelScheme | undefined = channels
    ? createChannelScheme({
        kit,
        settings: channels,
        facilitator,
        chainId: parseCaip2(options.network ?? DEFAULT_NETWORK),
        logger,
        receiverAuthorizer: options.receiverAuthorizer,
        chain: options.rpcUrl ? createChannelReader(options.rpcUrl, options.fetch ? { fetch: options.fetch } : {}) : undefined,
        now,
        reportCalls: options.keepCallRecords ?? false,
        decimals,
        observer: options.observe,
      })
    : undefined;
  // In the order of the 402's `accepts`. x402 clients take the first entry they can pay, and some take
  // the first without looking: `exact` first keeps every one of them paying as before (it is also the
  // one offer of the marketplace's documented 402 body). A channel locks a deposit of the payer's for
  // as long as it lives, so it is taken by clients that choose it: our SkillMarket by its deposit
  // policy, a reference client with the channel scheme registered alone or a selector that prefers it.
  // Usage-based prices (skills defined with `upto`), after exact and channels.
  const upto = createUptoScheme({ kit, facilitator, logger, facilitatorAddress: options.uptoFacilitator });
  const extra = (options.extraSchemes ?? []).map((build) => build({ kit, facilitator, logger, holdMs }));
  const schemes: ServerScheme[] = [...(channel ? [exact, channel] : [exact]), upto, ...extra];
  const twice = schemes.find((scheme, i) => schemes.findIndex((other) => other.id === scheme.id) !== i);
  if (twice) throw new ServeConfigError(`two schemes have the id ${JSON.stringify(twice.id)}`);
  const observe = options.observe && { observer: options.observe, marks, network: options.network ?? DEFAULT_NETWORK, logger };
  /** Routes at volume prices, by skill and amount (built once each). */
  const tierRoutes = new Map<string, SkillRoute>();
  const priced = async (route: SkillRoute, payer: string): Promise<SkillRoute> => {
    const amount = await tiers.amountFor(route, payer);
    if (amount === route.amount) return route;
    const key = `${route.name}\n${amount}`;
    let found = tierRoutes.get(key);
    if (!found || found.skill !== route.skill) {
      // Only `exact` is offered at the tier price: channels and `upto` sign the price as a maximum
      // and are charged the tier price per call anyway.
      const tier = offer(routeOf(route.name, route.skill, amount, route.terms.asset, options));
      const offers = new Map(route.offers);
      const exactOffer = tier.offers.get('exact');
      if (exactOffer) offers.set('exact', exactOffer);
      const accepts = [...offers.values()] as unknown as PaymentTerms['paymentRequired']['accepts'];
      found = { ...tier, offers, terms: { ...tier.terms, paymentRequired: { ...tier.terms.paymentRequired, accepts } } };
      tierRoutes.set(key, found);
    }
    return found;
  };
  const trial: TrialGate = createTrialGate({
    kit,
    now,
    store: plans,
    priced,
    ...(options.trials?.maxAgeSeconds !== undefined ? { maxAgeSeconds: options.trials.maxAgeSeconds } : {}),
    ...(options.trials?.ipWallets !== undefined ? { ipWallets: options.trials.ipWallets } : {}),
  });
  const trustedProxies = options.trials?.trustedProxies ?? [];
  const deps = { schemes: new Map(schemes.map((scheme) => [scheme.id, scheme])), observe, trial, priced };
  const offer = (route: BaseRoute): SkillRoute => {
    const offers = new Map<string, Offer>();
    for (const scheme of schemes) {
      // A skill its creator does not sell at the full price up front (`exact: false`).
      if (scheme.id === 'exact' && route.skill.exact === false) continue;
      const made = scheme.offer(route);
      if (made) offers.set(scheme.id, made);
    }
    const accepts = [...offers.values()] as unknown as PaymentTerms['paymentRequired']['accepts'];
    return { ...route, offers, terms: { ...route.terms, paymentRequired: { ...route.terms.paymentRequired, accepts } } };
  };
  const routes = new Map([...plain].map(([name, route]) => [name, offer(route)]));
  const names = [...routes.keys()];
  const publicUrl = (options.publicUrl ?? 'http://localhost:3002').replace(/\/+$/, '');
  const cors = corsPolicy(options.cors ?? true);
  const site: PublishedSite = {
    routes: () => routes.values(),
    title: options.serviceName ?? appName,
    serverUrl: publicUrl,
    iconUrl: options.iconUrl,
    openapi: openApiSettings(options.openapi),
  };
  /** The methods a path allows (405s' and OPTIONS' `Allow`); undefined for a path that is not served. */
  const allowed = (path: string) =>
    routes.has(path.slice(1)) ? SKILL_METHODS : path === '/health' || isPublished(path) ? DOCUMENT_METHODS : undefined;

  const handle = async (request: Request, ip: string): Promise<Response> => {
    const path = pathOf(request);
    if (path === '/health') {
      if (request.method !== 'GET' && request.method !== 'HEAD')
        return toResponse(failure(405, 'Method not allowed', {}, { Allow: DOCUMENT_METHODS }));
      const prices = Object.fromEntries([...routes.values()].map((r) => [r.name, formatPriceUsd(r.amount, r.terms.asset.decimals)]));
      // What each 402 asks now: a registry lists these offers (the channel's included) as the skill's terms.
      const accepts = Object.fromEntries([...routes.values()].map((r) => [r.name, r.terms.paymentRequired.accepts]));
      // Each skill's free trial and volume prices now (null: none): what `market skill trial|tiers` waits for.
      const plans = Object.fromEntries(
        [...routes.values()].map((r) => [r.name, { trial: r.skill.trial ?? null, tiers: r.skill.tiers ?? null }]),
      );
      return toResponse(jsonAnswer(200, { status: 'ok', skills: names, app: appName, prices, accepts, plans }));
    }
    const published = publishedAnswer(path, request.method, site);
    if (published) return toResponse(published);
    const route = routes.get(path.slice(1));
    if (!route) return toResponse(failure(404, 'Not found'));
    // GET answers the 402 too: payment channels send their refunds there, after reading the terms by
    // GET. Its declaration (`extensions.bazaar`) names POST, the way to call.
    if (request.method === 'GET') return paidGet(deps, route, request);
    if (request.method !== 'POST')
      return toResponse(failure(405, 'Method not allowed: call a skill with POST', {}, { Allow: SKILL_METHODS }));
    // Without a payment the answer is the 402, whatever the body: crawlers probe a paid route with an
    // empty POST and list only what answers 402. The input is checked before any payment is taken.
    if (!paymentHeader(request.headers) && !asksTrial(route, request)) return paidCall(deps, route, {}, request);

    const body = await readBodyText(request, maxBodyBytes);
    if (body.type === 'too-large') return toResponse(failure(413, `Request body larger than ${maxBodyBytes} bytes`));
    const parsed = parseJsonBody(body.text);
    if (parsed.type === 'invalid') return toResponse(failure(400, `Invalid JSON body: ${parsed.message}`));
    if (route.skill.inputSchema) {
      const problems = validateAgainst(route.skill.inputSchema, parsed.value);
      if (problems.length > 0) return toResponse(failure(400, 'Invalid input', { details: problems }));
    }
    return paidCall(deps, route, parsed.value, request, ip);
  };

  return {
    names,
    termsOf: (name) => routes.get(name)?.terms,
    setPrice(name, price) {
      const route = routes.get(name);
      if (!route) return false;
      const amount = parsePrice(price, route.terms.asset.decimals);
      if (amount === route.amount) return false;
      const updated = routeOf(name, route.skill, amount, route.terms.asset, options);
      plain.set(name, updated);
      routes.set(name, offer(updated));
      return true;
    },
    setPlans(name, next) {
      const route = plain.get(name);
      if (!route) return false;
      let skill: Skill;
      try {
        // Below what the skill asks now: its listing's price, which its owner may have edited.
        skill = withPlans(route.skill, next, route.terms.asset.decimals === 6 ? route.amount : undefined);
      } catch (error) {
        throw new ServeConfigError(`skill "${name}": ${errorText(error)}`);
      }
      if (samePlans(skill, route.skill)) return false;
      const updated = routeOf(name, skill, route.amount, route.terms.asset, options);
      plain.set(name, updated);
      routes.set(name, offer(updated));
      return true;
    },
    useReceiverAuthorizer(address) {
      if (!channel?.useReceiverAuthorizer(address)) return;
      for (const [name, route] of plain) routes.set(name, offer(route));
    },
    useUptoFacilitator(address) {
      if (!upto.useFacilitatorAddress(address)) return;
      for (const [name, route] of plain) routes.set(name, offer(route));
    },
    claimChannels: (all = true) => channel?.claim(all) ?? Promise.resolve({ channels: 0 }),
    channelBacklog: async () => channel?.backlog(),
    keptCallRecords: async () => (channel ? channel.keptCalls() : []),
    callRecordDelivered: (call) => channel?.delivered(call),
    async close() {
      exposure.stop();
      for (const scheme of schemes) await scheme.close?.();
      await trial.close();
    },
    async fetch(request, peer) {
      if (request.method === 'OPTIONS') {
        const preflight = cors.preflight(request);
        const allow = allowed(pathOf(request));
        if (allow) preflight.headers.set('Allow', allow);
        return preflight;
      }
      let response: Response;
      try {
        response = await handle(request, clientAddress(peerIp(request, peer), request.headers.get('x-forwarded-for'), trustedProxies));
      } catch (error) {
        logger.error('request failed', { error: errorText(error) });
        response = toResponse(failure(500, 'Internal server error'));
      }
      return cors.apply(request, response);
    },
  };
}

/** The methods a skill's path allows: POST calls it, GET answers its 402 (and takes a channel's refund). */
const SKILL_METHODS = 'POST, GET, OPTIONS';

/** The request's path, without trailing slashes (`/echo/` is `/echo`). */
const pathOf = (request: Request) => requestPath(request.url).replace(/(.)\/+$/, '$1');

/** Whether the request carries a payment (either header x402 names it by). */
const paymentHeader = (headers: Headers) => headers.has('PAYMENT-SIGNATURE') || headers.has('X-PAYMENT');

/** `holdMs`, checked: a whole number of ms from 0 to 120 000. */
export function holdOption(value: number | undefined): number {
  const holdMs = value ?? DEFAULT_HOLD_MS;
  if (!Number.isInteger(holdMs) || holdMs < 0 || holdMs > MAX_HOLD_MS)
    throw new ServeConfigError(`holdMs must be a whole number of milliseconds from 0 to ${MAX_HOLD_MS}`);
  return holdMs;
}

/** Checks the skills map and builds each skill's payment terms once (deterministic, as x402 requires). */
function buildRoutes(skills: Skills, options: SkillHandlerOptions): Map<string, BaseRoute> {
  if (typeof skills !== 'object' || skills === null || Object.keys(skills).length === 0) {
    throw new ServeConfigError('no skills provided: pass a map of skill name to skill(...)');
  }
  let asset: AssetInfo;
  try {
    asset = resolveAsset(options.network ?? DEFAULT_NETWORK, options.asset);
  } catch (error) {
    throw new ServeConfigError(`network/asset: ${errorText(error)}`);
  }
  const routes = new Map<string, BaseRoute>();
  for (const [name, definition] of Object.entries(skills)) {
    if (!NAME_PATTERN.test(name))
      throw new ServeConfigError(`skill name "${name.slice(0, 80)}" must be 1-64 letters, digits, _ or - (it becomes the URL path)`);
    if (RESERVED.has(name)) throw new ServeConfigError(`skill name "${name}" is reserved`);
    if (!isSkill(definition)) throw new ServeConfigError(`skills.${name} is not a skill: define it with skill(options, handler)`);
    routes.set(name, routeOf(name, definition, parsePrice(definition.price, asset.decimals), asset, options));
  }
  return routes;
}

/** One skill's route: its payment terms at `amount` (atomic units of `asset`). */
function routeOf(name: string, definition: Skill, amount: bigint, asset: AssetInfo, options: SkillHandlerOptions): BaseRoute {
  const publicUrl = (options.publicUrl ?? 'http://localhost:3002').replace(/\/+$/, '');
  try {
    const terms: PaymentTerms = buildPaymentTerms({
      amount,
      payTo: options.payTo,
      network: options.network ?? DEFAULT_NETWORK,
      asset,
      resourceUrl: `${publicUrl}/${name}`,
      description: definition.description ?? '',
      mimeType: 'application/json',
      maxTimeoutSeconds: Math.max(DEFAULT_MAX_TIMEOUT_SECONDS, Math.ceil(definition.timeout / 1000) + 30),
      service: {
        serviceName: options.serviceName,
        tags: [...definition.groups, ...(options.groups ?? [])],
        iconUrl: options.iconUrl,
      },
      extensions: { bazaar: declarationOf(definition) },
    });
    return { name, skill: definition, terms, amount };
  } catch (error) {
    throw new ServeConfigError(`skill "${name}": ${errorText(error)}`);
  }
}

/** Whether two definitions of a skill have the same free trial and volume prices. */
const samePlans = (a: Skill, b: Skill) =>
  JSON.stringify([a.trial?.calls, a.trial?.period, a.tiers]) === JSON.stringify([b.trial?.calls, b.trial?.period, b.tiers]);
