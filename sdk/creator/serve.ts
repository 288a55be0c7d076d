/**
 * `serve(skills, options)`: resolves the wallet and keys, puts the skill handler on a port,
 * registers the skills and starts call tracking. It starts even when the facilitator or the
 * registry cannot be reached (with a warning), so a creator's server never depends on them to boot.
 * Channel call records are kept with their channels until the registry has them: those an earlier
 * run did not deliver are sent again at start.
 */
import {
  DEFAULT_NETWORK,
  formatPrice,
  normalizeNetwork,
  parsePrice,
  resolveAsset,
  type Address,
  type AssetInfo,
  type SupportedKind,
} from '../x402/index';
import type { CorsOption } from './cors';
import type { OpenApiOptions } from './discovery/publish';
import { ChannelStoreDamagedError, RegistrationError, ServeConfigError } from './errors';
import type { SettlementOption } from './schemes/exact/exposure';
import { createFacilitatorClient } from './facilitator-client';
import {
  createSkillHandler,
  DEFAULT_APP_NAME,
  DEFAULT_FACILITATOR_URL,
  DEFAULT_MAX_BODY_BYTES,
  holdOption,
  type SkillHandlerOptions,
  type Peer,
  type TrialOptions,
} from './handler';
import type { LedgerOptions } from './schemes/exact/ledger';
import { applyListingPlans, applyListingPrice, DEFAULT_LISTING_REFRESH_MS, followListingPrices } from './listing-price';
import { listen } from './listen';
import type { VerifyMode } from './schemes/exact/payers';
import { consoleLogger, errorText, type CreatorLogger } from './logger';
import { DEFAULT_API_URL, register, type RegistrationResult } from './register';
import { RegistryClient } from '../registry/client';
import { httpUrl, isProduction, processEnv, resolveApiKey, resolveApiUrl, resolveWallet, type Env } from './settings';
import type { Skills } from './skill';
import type { ChannelBacklog, ServerObserver } from './observer';
import { requestPath } from '../http/request-path';
import { catalogueLimitWarnings } from './discovery/limits';
import { MAX_FINAL_HOLD_MS } from './schemes/exact/index';
import type { ClaimRound } from './schemes/channel/claims';
import type { ChannelOption } from './schemes/channel/settings';
import type { ServerSchemeFactory, SettledCall } from './scheme';
import { loadReceiptSigner, receiptKeyFolder } from './receipts';
import { createCallTracker, type CallTracker, type TrackerHooks, type TrackingOptions } from './tracker';

/**
 * Default port of a skill server.
 *
 * @example
 * const server = await serve({ wordCount }); // no port option: DEFAULT_PORT (3002)
 * console.log(server.url); // 'http://localhost:3002'
 */
export const DEFAULT_PORT = 3002;
/** How long after a failed `/supported` the facilitator is asked again for its receiver authorizer. */
const DEFAULT_FACILITATOR_RETRY_MS = 5_000;

/** How long the server waits before it reads the channel store's kept call records again, when it could not at start. */
const KEPT_RETRY_MS = 30_000;

/** Auto-registration at start (`serve({ register })`). */
export interface RegistrationOptions {
  /** Public URL of this skill server; each skill is registered as `{endpoint}/<name>`. Required. */
  endpoint: string;
  /** Registry URL; default the serve `apiUrl`. */
  apiUrl?: string;
  /** Default true; false: nothing is registered. */
  enabled?: boolean;
  /** On failure: `'throw'` (serve() rejects), `'warn'` (default: a warning per skill) or `'silent'`. */
  onError?: 'throw' | 'warn' | 'silent';
  /** Groups every skill gets, merged with its own. */
  groups?: string[];
  /** `concurrency`: registrations in flight at once; default 5. */
  batch?: { concurrency?: number };
}

/** Options of {@link serve}; every one is optional. */
export interface ServeOptions {
  /** Default 3002; 0 picks a free port. */
  port?: number;
  /** Interface to listen on; default `0.0.0.0`. */
  hostname?: string;
  /** Payout address (42 chars) or private key (66 chars, address derived). Default: MARKET_WALLET_ADDRESS, MARKET_WALLET_KEY, SKILLZ_WALLET_ADDRESS, SKILLZ_WALLET_KEY. */
  wallet?: string;
  /** Creator API key for registration and tracking. Default: MARKET_API_KEY, then SKILLZ_API_KEY. */
  apiKey?: string;
  /** Registry URL used for tracking (and registration). Default: MARKET_API_URL, SKILLZ_API_URL, then `http://localhost:3000`. */
  apiUrl?: string;
  /** CAIP-2 payment network; default `eip155:8453` (Base mainnet). */
  network?: string;
  /** Token paid in; default the network's USDC. Needed on chains without one (a local anvil). */
  asset?: AssetInfo;
  /** Payment facilitator; default `http://localhost:3001`. */
  facilitatorUrl?: string;
  /**
   * Key for a facilitator that requires one (sent as a Bearer token); default none. With channels
   * that name our facilitator's receiver authorizer, the key it binds to this server's payout
   * address (its FACILITATOR_RECEIVER_KEYS): without it, it refuses the refunds its authorizer would
   * sign, and, unless it is open (FACILITATOR_OPEN), the claims too.
   */
  facilitatorApiKey?: string;
  /** JSON-RPC URL of the network: also asks the chain when a payment's outcome is unknown. Default none (the facilitator alone). */
  rpcUrl?: string;
  /** Name shown by /health and sent as User-Agent; default `skill-market skill server`. */
  appName?: string;
  /**
   * Name catalogues show for this server: the 402's `resource.serviceName` (x402 `bazaar`), with
   * each skill's groups as `tags`. Printable ASCII, at most 32 characters. Default `appName` when given.
   * @example serve(skills, { serviceName: 'Tide Co', iconUrl: 'https://tides.example/icon.png' })
   */
  serviceName?: string;
  /** Icon catalogues show (`resource.iconUrl`); sent only when it is https at a named host. Default none. */
  iconUrl?: string;
  /**
   * What `/openapi.json` tells crawlers beyond the skills: `contact` (`{ name?, email?, url? }`;
   * default the server's name and `publicUrl`, whose page lists the skills) and `guidance` for
   * agents (at most 4000 characters; default: how to call and pay, generated).
   * @example serve(skills, { openapi: { contact: { email: 'skills@tide.example' } } })
   */
  openapi?: OpenApiOptions;
  /** Called on each skill invocation with its name and input. */
  onCall?: (skillName: string, input: unknown) => unknown;
  /** Called when a skill errors (throws, times out, or breaks its outputSchema). */
  onError?: (skillName: string, error: unknown) => unknown;
  /** Auto-registration config; none: no registration. */
  register?: RegistrationOptions;
  /**
   * Told of each paid call (skill, scheme, outcome, amount, seconds) and each channel claim and
   * settle: how `market serve` counts its Prometheus metrics. Default none.
   * @example serve(skills, { observe: { call: (c) => console.log(c.skill, c.outcome, c.amount) } })
   */
  observe?: ServerObserver;
  /**
   * Paths answered by these handlers before the skills (GET `/metrics` of `market serve`); a path
   * may not be a skill's. Default none.
   */
  routes?: Record<string, (request: Request) => Response | Promise<Response>>;
  /**
   * With registration: how often the skill server reads its listings and follows their prices, ms;
   * default 2000, 0 only at start. The listing is the one price: an edit in the dashboard (or
   * `updateSkill`) is what the 402 asks within this interval, and re-registration keeps it.
   * @example serve(skills, { register: { endpoint }, listingRefreshMs: 30_000 })
   */
  listingRefreshMs?: number;
  /**
   * With channels signed for by the facilitator's receiver authorizer: how long after a failed
   * `/supported` the facilitator is asked again, ms, until it answers; default 5000.
   */
  facilitatorRetryMs?: number;
  /**
   * Report settled calls to the registry (`POST /analytics/calls`); default true. An object tunes the
   * retries. A channel call's record is kept with its channel until the registry has it, and sent
   * again after a restart.
   */
  trackCalls?: boolean | TrackingOptions;
  /** Public base URL for the payment terms' `resource`; default `register.endpoint`, else `http://localhost:<port>`. */
  publicUrl?: string;
  /** Largest request body; default 1 MiB. */
  maxBodyBytes?: number;
  /** Bounds of the single-use and replay memory. */
  replay?: LedgerOptions;
  /**
   * Longest a paid request is held, ms, while its payment's outcome is open (the facilitator
   * answered `settlement_pending`, or its answer was lost): answered with the result or the 402 as
   * soon as the outcome is known, past the bound 409 `payment_pending`. Default 30 000; 0 to 120 000.
   * @example serve(skills, { holdMs: 10_000 })
   */
  holdMs?: number;
  /**
   * When a paid call's result leaves: `'broadcast'` (default) once the facilitator has broadcast
   * the transfer, within caps of unconfirmed value (default $1 per payer, $10 per skill; beyond
   * them a call waits for its receipt); `'confirmed'` once the transfer is mined.
   * @example serve(skills, { settlement: { mode: 'broadcast', maxUnconfirmedPerPayer: '$0.25' } })
   */
  settlement?: SettlementOption;
  /**
   * When the facilitator verifies a payment: `'at-settlement'` (default) for payers who already paid
   * this server (checked here, verified by the settle: one round trip less), new payers first;
   * `'first'` before every handler run (expensive handlers, side effects).
   * @example serve(skills, { verify: 'first' })
   */
  verify?: VerifyMode;
  /** Used for the facilitator and the registry; default the global fetch. */
  fetch?: typeof fetch;
  /**
   * Clock of the payment paths, ms (replay memory, settlement waits, channel claims and the end of
   * a payer's timed withdrawal, which the chain's time sets); default `Date.now`.
   * @example serve(skills, { now: () => Date.now() + skewMs })
   */
  now?: () => number;
  /** Default: readable lines on the console. */
  logger?: CreatorLogger;
  /** Environment to resolve wallet, API key and URL from; default `process.env`. */
  env?: Env;
  /**
   * Calls from web pages (CORS), so a browser can pay and call a skill and read `PAYMENT-REQUIRED`
   * and `PAYMENT-RESPONSE`. Default `true`: any origin (`Access-Control-Allow-Origin: *`; skills carry
   * no cookies). `{ origins: ['https://app.example'] }`: only those origins (echoed, `Vary: Origin`).
   * `false`: no CORS headers.
   * @example serve(skills, { cors: { origins: ['https://market.example'] } })
   */
  cors?: CorsOption;
  /**
   * Payment channels (x402 `batch-settlement`), offered in the 402 after `exact`. Default
   * on for skills priced below $0.01 ({@link DEFAULT_CHANNEL_THRESHOLD}); `false` turns them off;
   * an object tunes them: `below`, `all`, `receiverAuthorizerKey` (default: the facilitator's
   * receiver authorizer from its `/supported`), `withdrawDelay` (default 3600 s), `store` (a
   * {@link ChannelStore} or a folder; default `.market/channels`), `claimAbove` (default `$1`),
   * `claimWithinMs` (default 5 minutes). Vouchers are checked here and written durably before a
   * call is answered; claims and settles go through the facilitator.
   * @example serve(skills, { channels: { store: '/var/lib/skills/channels', claimAbove: '$5' } })
   */
  channels?: ChannelOption;
  /**
   * The key this server signs a receipt with on every paid answer (receipts.ts; `market serve`:
   * MARKET_RECEIPT_KEY). Default: one made at the first start and kept in the data folder (the
   * folder holding the channel store: `.market/receipt-key`), so its address outlives restarts.
   * Only its address leaves the server: registration lists it as the skills' `receiptSigner`.
   * @example serve(skills, { receiptKey: process.env.MY_RECEIPT_KEY })
   */
  receiptKey?: string | undefined;
  /**
   * Free trials of skills defined with `trial`: `store` (a folder, default `.market/trials`, where
   * each wallet's trial calls are counted durably), `maxAgeSeconds` (how long a signed sign-in is
   * good for, default 300), `ipWallets` (new trial wallets one client IP address may bring per
   * skill and period, default 3) and `trustedProxies` (the proxies in front of the server, whose
   * `X-Forwarded-For` names the client's address; default none).
   * @example serve(skills, { trials: { store: '/var/lib/skills/trials', ipWallets: 5, trustedProxies: ['10.0.0.2'] } })
   */
  trials?: TrialOptions;
  /**
   * @internal Schemes sold besides `exact` and payment channels (see `SkillHandlerOptions`). For
   * schemes made up by tests (test/support/schemes/): not part of the published API.
   */
  extraSchemes?: readonly ServerSchemeFactory[];
}

/** A running skill server. */
export interface SkillServer {
  /** Base URL, e.g. `http://localhost:3002`. */
  url: string;
  port: number;
  /** Address the payments go to. */
  payTo: Address;
  /** Address of the key the answers' receipts are signed with (the listings' `receiptSigner`). */
  receiptSigner: Address;
  /** One result per skill when registration ran; empty otherwise. */
  registration: RegistrationResult[];
  /** The same handler in process, without the network. */
  fetch(request: Request, peer?: Peer): Promise<Response>;
  /** Call records not yet delivered to the registry: queued, in flight or waiting to retry (0 without tracking). */
  pendingCalls(): number;
  /**
   * Tries every pending call record now and resolves once none is left (each delivered, or dropped
   * with a warning) or after `timeoutMs` (default 10 s); true when none is left.
   */
  flushCalls(timeoutMs?: number): Promise<boolean>;
  /** Claims and settles now what every payment channel owes (or, with `all` false, what is due); `{ channels: 0 }` when none. */
  claimChannels(all?: boolean): Promise<ClaimRound>;
  /** What the payment channels owe not yet claimed or settled; undefined without channels. */
  channelBacklog(): Promise<ChannelBacklog | undefined>;
  /** Stops listening, lets running calls finish, delivers pending call records (briefly), stops claims. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a paid skill server: `POST /<name>` for every skill (x402 payment required; `GET /<name>`
 * answers its 402 and takes a channel's cooperative refund), `GET /health`, and for crawlers
 * `GET /openapi.json` (the paid operations with `x-payment-info`), `/.well-known/x402`, `/` and `/favicon.svg`.
 *
 * @throws ServeConfigError `no skills provided`, `wallet not found`, or a malformed option
 * @throws ChannelStoreDamagedError when the channel folder's snapshot is damaged
 * @throws RegistrationError when registration fails with `register.onError: 'throw'`
 * @example
 * import { serve, skill } from 'skill-market/creator';
 * const echo = skill({ price: '$0.001', description: 'Echoes its input', groups: ['tools'] }, (input) => ({ echo: input }));
 * const server = await serve({ echo }, { register: { endpoint: 'https://skills.example.com' } }); // port 3002
 */
export async function serve(skills: Skills, options: ServeOptions = {}): Promise<SkillServer> {
  if (typeof skills !== 'object' || skills === null || Object.keys(skills).length === 0)
    throw new ServeConfigError('no skills provided: pass a map of skill name to skill(...)');
  const env = options.env ?? processEnv();
  const logger = options.logger ?? consoleLogger;
  const wallet = resolveWallet(options.wallet, env);
  const port = options.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ServeConfigError('port must be an integer from 0 to 65535');
  const hostname = options.hostname ?? '0.0.0.0';
  const refreshMs = options.listingRefreshMs ?? DEFAULT_LISTING_REFRESH_MS;
  if (!Number.isInteger(refreshMs) || refreshMs < 0)
    throw new ServeConfigError('listingRefreshMs must be a whole number of ms (0: only at start)');
  const facilitatorRetryMs = options.facilitatorRetryMs ?? DEFAULT_FACILITATOR_RETRY_MS;
  if (!Number.isInteger(facilitatorRetryMs) || facilitatorRetryMs < 1)
    throw new ServeConfigError('facilitatorRetryMs must be a whole number of ms above 0');
  const routes = new Map(Object.entries(options.routes ?? {}));
  for (const path of routes.keys())
    if (!path.startsWith('/') || path.slice(1) in skills)
      throw new ServeConfigError(`route ${path} must start with / and not be a skill's`);
  const apiKey = resolveApiKey(options.apiKey, env);
  const apiUrl = resolveApiUrl(options.apiUrl, env, DEFAULT_API_URL);
  const facilitatorUrl = httpUrl(options.facilitatorUrl ?? DEFAULT_FACILITATOR_URL, 'facilitatorUrl');
  const network = checkedNetwork(options.network ?? DEFAULT_NETWORK);
  const appName = options.appName ?? DEFAULT_APP_NAME;
  const fetchOption = options.fetch ? { fetch: options.fetch } : {};
  const registration = options.register && options.register.enabled !== false ? options.register : undefined;

  const channelsFolder =
    typeof options.channels === 'object' && typeof options.channels.store === 'string' ? options.channels.store : undefined;
  const receipts = await loadReceiptSigner({ key: options.receiptKey, folder: receiptKeyFolder(channelsFolder) });
  let tracker: CallTracker | undefined;
  const handlerOptions = (publicUrl: string): SkillHandlerOptions => ({
    payTo: wallet.address,
    facilitatorUrl,
    ...(options.facilitatorApiKey ? { facilitatorApiKey: options.facilitatorApiKey } : {}),
    network,
    publicUrl,
    appName,
    logger,
    exposeErrors: !isProduction(env),
    ...(options.cors !== undefined ? { cors: options.cors } : {}),
    ...(options.asset ? { asset: options.asset } : {}),
    ...(options.onCall ? { onCall: options.onCall } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.observe ? { observe: options.observe } : {}),
    ...(options.maxBodyBytes ? { maxBodyBytes: options.maxBodyBytes } : {}),
    ...(options.replay ? { replay: options.replay } : {}),
    ...(options.holdMs !== undefined ? { holdMs: options.holdMs } : {}),
    ...(options.settlement !== undefined ? { settlement: options.settlement } : {}),
    ...(options.verify !== undefined ? { verify: options.verify } : {}),
    ...(options.rpcUrl ? { rpcUrl: httpUrl(options.rpcUrl, 'rpcUrl') } : {}),
    ...(options.channels !== undefined ? { channels: options.channels } : {}),
    ...(options.trials !== undefined ? { trials: options.trials } : {}),
    ...(options.extraSchemes ? { extraSchemes: options.extraSchemes } : {}),
    ...(receiverAuthorizer ? { receiverAuthorizer } : {}),
    ...(uptoFacilitator ? { uptoFacilitator } : {}),
    ...((options.serviceName ?? options.appName) ? { serviceName: options.serviceName ?? options.appName } : {}),
    ...(options.iconUrl ? { iconUrl: options.iconUrl } : {}),
    ...(options.openapi !== undefined ? { openapi: options.openapi } : {}),
    ...(registration?.groups ? { groups: registration.groups } : {}),
    ...(options.now ? { now: options.now } : {}),
    receiptSigner: receipts,
    onSettled: (call) => tracker?.track(call),
    ...(tracker ? { keepCallRecords: true } : {}),
    ...fetchOption,
  });
  let receiverAuthorizer: string | undefined;
  let uptoFacilitator: string | undefined;
  const fixedUrl = options.publicUrl ?? (registration?.endpoint && URL.canParse(registration.endpoint) ? registration.endpoint : undefined);
  tracker = startTracking(options, apiKey, apiUrl, appName, logger, {
    kept: (call) => call.channelId !== undefined,
    delivered: (call) => app.callRecordDelivered(call),
  });
  let app = createSkillHandler(skills, handlerOptions(fixedUrl ?? `http://localhost:${port}`));
  const longest = Math.max(...Object.values(skills).map((s) => s.timeout));
  const listener = await listen(async (request, peer) => (routes.get(requestPath(request.url)) ?? app.fetch)(request, peer), {
    port,
    hostname,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    // A paid request: the handler, the facilitator's answers, then perhaps the hold (with an RPC, until the outcome is final).
    idleTimeoutSeconds: Math.ceil((longest + (options.rpcUrl ? MAX_FINAL_HOLD_MS : holdOption(options.holdMs))) / 1000) + 30,
  }).catch((error: unknown) => {
    throw new ServeConfigError(`cannot listen on ${hostname}:${port}: ${errorText(error)}`);
  });
  const url = `http://${hostname === '0.0.0.0' || hostname === '::' ? 'localhost' : hostname}:${listener.port}`;
  if (fixedUrl === undefined && port === 0) {
    await app.close();
    app = createSkillHandler(skills, handlerOptions(url));
  }
  // The channel call records an earlier run kept (this also opens a channel folder left by it: a
  // damaged one stops the start here, with what to do; a store that cannot be reached now is asked again later).
  let keptRecords: SettledCall[] | undefined;
  try {
    keptRecords = await app.keptCallRecords();
  } catch (error) {
    if (error instanceof ChannelStoreDamagedError) {
      await listener.stop();
      await app.close();
      tracker?.stop();
      throw error;
    }
    logger.warn('the channel store cannot be read now; its kept call records are sent later', { error: errorText(error) });
  }

  const decimals = resolveAsset(network, options.asset).decimals;
  logger.info(`skill server listening on ${url}`, { network, payTo: wallet.address, wallet: wallet.source, facilitator: facilitatorUrl });
  for (const [name, s] of Object.entries(skills)) {
    logger.info(
      `  POST /${name}  ${formatPrice(parsePrice(s.price, decimals), decimals)} USDC${s.description ? `  ${s.description}` : ''}`,
    );
  }
  const catalogue = {
    serviceName: options.serviceName ?? options.appName,
    iconUrl: options.iconUrl,
    groups: options.register?.groups,
    facilitatorUrl,
  };
  for (const warning of catalogueLimitWarnings(skills, catalogue)) logger.warn(warning);

  let follower: { stop(): void } | undefined;
  let stopped: Promise<void> | undefined;
  let authorizerTimer: ReturnType<typeof setTimeout> | undefined;
  let keptTimer: ReturnType<typeof setTimeout> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      follower?.stop();
      clearTimeout(authorizerTimer);
      clearTimeout(keptTimer);
      await listener.stop();
      await app.close();
      if (tracker) {
        await tracker.flush(2000);
        tracker.stop();
      }
    })());

  const [results, kinds] = await Promise.all([
    registration
      ? registerAtStart(skills, registration, {
          apiKey,
          apiUrl,
          payTo: wallet.address,
          receiptSigner: receipts.address,
          network,
          appName,
          logger,
          fetchOption,
        })
      : [],
    probeFacilitator(facilitatorUrl, network, logger, fetchOption),
  ]);
  // Channels signed for by the facilitator's receiver authorizer are offered once it is known, and
  // upto (for skills defined with it) once the facilitator's address for it is.
  const wantsAuthorizer = wantsFacilitatorAuthorizer(options.channels);
  const wantsUpto = Object.values(skills).some((s) => s.upto === true);
  const useAuthorizer = (known: SupportedKind[] | undefined) => {
    authorizerTimer = undefined;
    if (stopped) return; // a probe that was under way when the server stopped starts no other
    const address = known?.find((k) => k.scheme === 'upto' && k.network === network)?.extra?.facilitatorAddress;
    if (wantsUpto && typeof address === 'string') {
      uptoFacilitator = address;
      app.useUptoFacilitator(address);
    } else if (wantsUpto && known && !uptoFacilitator) {
      logger.warn(
        `the facilitator does not list upto on ${network}: skills defined with upto are sold by exact alone, at their price (those with exact: false only by channel, if at all)`,
      );
    }
    const found = known?.find((k) => k.scheme === 'batch-settlement' && k.network === network)?.extra?.receiverAuthorizer;
    if (wantsAuthorizer && typeof found === 'string') {
      receiverAuthorizer = found;
      app.useReceiverAuthorizer(found);
    } else if (!known) {
      authorizerTimer = setTimeout(
        () => void probeFacilitator(facilitatorUrl, network, undefined, fetchOption).then(useAuthorizer),
        facilitatorRetryMs,
      );
      (authorizerTimer as { unref?: () => void }).unref?.();
    }
  };
  if (wantsAuthorizer || wantsUpto) useAuthorizer(kinds);
  for (const r of results) {
    if (r.success && r.skillId) tracker?.remember(r.name, r.skillId);
    if (r.success && r.price) applyListingPrice(app, r.name, r.price, logger);
    if (r.success && r.trial !== undefined && r.tiers !== undefined)
      applyListingPlans(app, r.name, { trial: r.trial, tiers: r.tiers }, logger);
  }
  const sendKept = (calls: SettledCall[] | undefined) => {
    if (stopped || !tracker) return;
    if (!calls) {
      keptTimer = setTimeout(() => void app.keptCallRecords().then(sendKept, () => sendKept(undefined)), KEPT_RETRY_MS);
      (keptTimer as { unref?: () => void }).unref?.();
      return;
    }
    if (calls.length > 0) logger.info(`sending ${calls.length} channel call record(s) an earlier run kept for the registry`);
    for (const call of calls) tracker.track(call);
  };
  sendKept(keptRecords);
  if (registration && apiKey && refreshMs > 0 && results.some((r) => r.success)) {
    const client = new RegistryClient({ apiUrl: registration.apiUrl ?? apiUrl, apiKey, userAgent: appName, ...fetchOption });
    follower = followListingPrices({ client, app: () => app, intervalMs: refreshMs, logger });
  }
  if (registration?.onError === 'throw' && results.some((r) => !r.success)) {
    await stop();
    const failed = results.filter((r) => !r.success);
    throw new RegistrationError(`registration failed for ${failed.map((r) => `"${r.name}" (${r.error})`).join(', ')}`, results);
  }
  return {
    url,
    port: listener.port,
    payTo: wallet.address,
    receiptSigner: receipts.address,
    registration: results,
    fetch: (request, peer) => app.fetch(request, peer),
    pendingCalls: () => tracker?.pending() ?? 0,
    flushCalls: async (timeoutMs = 10_000) => (tracker ? tracker.flush(timeoutMs) : true),
    claimChannels: (all = true) => app.claimChannels(all),
    channelBacklog: () => app.channelBacklog(),
    stop,
  };
}

function startTracking(
  options: ServeOptions,
  apiKey: string | undefined,
  apiUrl: string,
  appName: string,
  logger: CreatorLogger,
  hooks: TrackerHooks,
): CallTracker | undefined {
  if (options.trackCalls === false) return undefined;
  if (!apiKey) {
    logger.info('call tracking off: no API key (set MARKET_API_KEY)');
    return undefined;
  }
  const client = new RegistryClient({
    apiUrl,
    apiKey,
    userAgent: appName,
    retry: { attempts: 2 },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return createCallTracker(client, logger, typeof options.trackCalls === 'object' ? options.trackCalls : {}, hooks);
}

async function registerAtStart(
  skills: Skills,
  registration: RegistrationOptions,
  context: {
    apiKey?: string | undefined;
    apiUrl: string;
    payTo: Address;
    receiptSigner: Address;
    network: string;
    appName: string;
    logger: CreatorLogger;
    fetchOption: { fetch?: typeof fetch };
  },
): Promise<RegistrationResult[]> {
  const results = await register(skills, {
    apiKey: context.apiKey ?? '',
    paymentAddress: context.payTo,
    receiptSigner: context.receiptSigner,
    endpoint: registration.endpoint,
    apiUrl: registration.apiUrl ?? context.apiUrl,
    network: context.network,
    userAgent: context.appName,
    ...(registration.groups ? { groups: registration.groups } : {}),
    ...(registration.batch ? { batch: registration.batch } : {}),
    ...context.fetchOption,
  });
  const mode = registration.onError ?? 'warn';
  for (const r of results) {
    if (r.success) context.logger.info(`registered "${r.name}" as ${r.slug}`);
    else if (mode === 'warn') context.logger.warn(`registration of "${r.name}" failed: ${r.error}`);
  }
  return results;
}

/**
 * The facilitator's kinds; warns (never fails) when it cannot be reached or does not settle on
 * our network (no `logger`: quietly, for the retries).
 */
async function probeFacilitator(
  url: string,
  network: string,
  logger: CreatorLogger | undefined,
  fetchOption: { fetch?: typeof fetch },
): Promise<SupportedKind[] | undefined> {
  try {
    const kinds = await createFacilitatorClient({ url, ...fetchOption }).supported(2000);
    if (!kinds.some((k) => k.scheme === 'exact' && k.network === network)) {
      logger?.warn(`the facilitator at ${url} does not list exact payments on ${network}; paid calls may fail`);
    }
    return kinds;
  } catch (error) {
    logger?.warn(`the facilitator cannot be reached now; paid calls fail until it can`, { facilitator: url, error: errorText(error) });
    return undefined;
  }
}

/** Channels on, without a receiver authorizer key of the creator's. */
function wantsFacilitatorAuthorizer(option: ChannelOption | undefined): boolean {
  return option !== false && (option === undefined || option === true || option.receiverAuthorizerKey === undefined);
}

function checkedNetwork(network: string): string {
  try {
    return normalizeNetwork(network);
  } catch (error) {
    throw new ServeConfigError(`network: ${errorText(error)}`);
  }
}
