/**
 * Skill-server test fixtures: a local chain with our facilitator listening on a free port, the
 * chain's token as a payment asset, a paying client built on the SDK's x402 codec, and a logger
 * that records what the server says.
 */
import type { Address, LocalAccount } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import type { CreatorLogger, ServeOptions } from 'skill-market/creator';
import {
  decodePaymentRequired,
  encodePaymentPayload,
  parsePaymentRequirements,
  signAuthorization,
  type AssetInfo,
} from 'skill-market/x402';
import { type LocalChain, startChain } from './chain';
import type { Clock, FacilitatorSettings } from '../../src/facilitator';
import { type FacilitatorFixture, startFacilitatorFixture } from './facilitator';

export interface PaymentStack {
  chain: LocalChain;
  facilitator: FacilitatorFixture;
  facilitatorUrl: string;
  /** The chain's EIP-3009 token, for `serve({ asset })`. */
  asset: AssetInfo;
  close(): Promise<void>;
}

/** A request a skill server sent, as {@link recordingFetch} saw it. */
export interface SentRequest {
  method: string;
  path: string;
  /** The JSON body, parsed; undefined for none. */
  body: unknown;
}

/** A fetch for `serve({ fetch })` that records each request (to the facilitator, the registry) before sending it. */
export function recordingFetch(): { fetch: typeof fetch; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const recording = ((input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    sent.push({ method: init?.method ?? 'GET', path: url.pathname, body });
    return fetch(input, init);
  }) as typeof fetch;
  return { fetch: recording, sent };
}

/** The chain's token as `serve({ asset })` takes it. */
export const chainAsset = (chain: LocalChain): AssetInfo => ({
  address: chain.token.address,
  name: chain.token.name,
  version: chain.token.version,
  decimals: chain.token.decimals,
});

/** The receipt key test skill servers sign with unless a test gives another. */
const TEST_RECEIPT_KEY = generatePrivateKey();

/**
 * serve() options of a skill server on a free loopback port, paid in the chain's token through the
 * facilitator at `facilitatorUrl`, registering and tracking nothing, logging to a
 * {@link recordingLogger}; `extra` wins.
 */
export function loopbackServeOptions(
  chain: LocalChain,
  facilitatorUrl: string,
  payTo: Address,
  extra: Partial<ServeOptions> = {},
): ServeOptions {
  return {
    port: 0,
    hostname: '127.0.0.1',
    wallet: payTo,
    facilitatorUrl,
    network: chain.network,
    asset: chainAsset(chain),
    trackCalls: false,
    logger: recordingLogger(),
    env: {},
    // One receipt key for every test server, as a server's kept key outlives its restarts (and a
    // server without one would keep a new one in .market/ of the working directory).
    receiptKey: TEST_RECEIPT_KEY,
    ...extra,
  };
}

/** {@link loopbackServeOptions} through the facilitator fixture `f` (listening), logging to `logger`. */
export function localServeOptions(
  chain: LocalChain,
  f: FacilitatorFixture,
  payTo: Address,
  logger: CreatorLogger,
  extra: Partial<ServeOptions> = {},
): ServeOptions {
  return loopbackServeOptions(chain, `http://127.0.0.1:${f.facilitator.app.server!.port}`, payTo, { logger, ...extra });
}

/** anvil + our token + our facilitator (embedded ledger) served over HTTP on a free port. */
export async function startPaymentStack(
  options: { payers?: number; facilitator?: Partial<FacilitatorSettings>; clock?: Clock } = {},
): Promise<PaymentStack> {
  const chain = await startChain({ payers: options.payers ?? 3, relayers: 1 });
  const facilitator = await startFacilitatorFixture(chain, 'embedded', {
    ...(options.facilitator ? { config: options.facilitator } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  facilitator.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
  const facilitatorUrl = `http://127.0.0.1:${facilitator.facilitator.app.server!.port}`;
  return {
    chain,
    facilitator,
    facilitatorUrl,
    asset: chainAsset(chain),
    async close() {
      await facilitator.facilitator.app.stop();
      await facilitator.close();
      await chain.stop();
    },
  };
}

/** Log lines a skill server wrote, as `level message` strings. */
export function recordingLogger(): CreatorLogger & {
  lines: string[];
  has(level: string, text: string): boolean;
  /** Resolves once a line of `level` containing `text` is (or already was) written. */
  logged(level: string, text: string): Promise<void>;
} {
  const lines: string[] = [];
  const waiting = new Set<{ level: string; text: string; resolve: () => void }>();
  const matches = (line: string, level: string, text: string) => line.startsWith(`${level} `) && line.includes(text);
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    const line = `${level} ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`;
    lines.push(line);
    for (const waiter of waiting) {
      if (!matches(line, waiter.level, waiter.text)) continue;
      waiting.delete(waiter);
      waiter.resolve();
    }
  };
  const has = (level: string, text: string) => lines.some((l) => matches(l, level, text));
  return {
    lines,
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    has,
    logged: (level, text) => (has(level, text) ? Promise.resolve() : new Promise((resolve) => waiting.add({ level, text, resolve }))),
  };
}

type Send = (url: string, init: RequestInit) => Promise<Response>;
const overHttp: Send = (url, init) => fetch(url, init);

export const postJson = (url: string, body: unknown, headers: Record<string, string> = {}, send: Send = overHttp) =>
  send(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/**
 * Asks `url` for its terms (an unpaid POST answered 402, read from the PAYMENT-REQUIRED header)
 * and returns a signed proof for them, ready for the X-Payment header.
 */
export async function proofFor(url: string, input: unknown, payer: LocalAccount, send: Send = overHttp): Promise<string> {
  const unpaid = await postJson(url, input, {}, send);
  if (unpaid.status !== 402) throw new Error(`expected 402 from ${url}, got ${unpaid.status}: ${await unpaid.text()}`);
  const header = unpaid.headers.get('PAYMENT-REQUIRED');
  if (!header) throw new Error('402 without PAYMENT-REQUIRED');
  const required = decodePaymentRequired(header);
  const payload = await signAuthorization(payer, parsePaymentRequirements(required.accepts[0]), { resource: required.resource });
  return encodePaymentPayload(payload);
}

/** The whole paid call: terms, proof, paid request. */
export async function paidPost(url: string, input: unknown, payer: LocalAccount, send: Send = overHttp): Promise<Response> {
  const proof = await proofFor(url, input, payer, send);
  return postJson(url, input, { 'X-Payment': proof }, send);
}

/** Balances of several addresses at once. */
export async function balances<const A extends Address[]>(chain: LocalChain, ...addresses: A): Promise<{ [K in keyof A]: bigint }> {
  return (await Promise.all(addresses.map((a) => chain.balanceOf(a)))) as { [K in keyof A]: bigint };
}
