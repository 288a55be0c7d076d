/**
 * A channel store kept by the facilitator (our `market facilitator`'s `/hosted-channels`), for a
 * payee with several skill servers or instances that share no database: every server of the
 * receiver takes a payer's channel through one state. A call leases the channel (its state, and a
 * lease to write the next one), runs, then writes under the lease; the facilitator refuses a write
 * whose lease lapsed and was taken, and the call then fails with nothing charged. Claim rounds run
 * one at a time across the servers. The key is the one the facilitator binds to the receiver
 * (FACILITATOR_RECEIVER_KEYS), the same that consents to the claims and refunds its authorizer
 * signs: give it to `serve()` as `facilitatorApiKey` too.
 */
import type { Hex } from '../../../x402/index';
import { excerpt } from '../../../http/errors';
import { exchange, type FetchLike, isRecord, parseJson } from '../../../http/exchange';
import type { ChannelState, ChannelStore } from './store';

/** Options of {@link hostedChannelStore}. */
export interface HostedStoreOptions {
  /** The facilitator's base URL. */
  url: string;
  /** A key the facilitator binds to this server's receiver. */
  apiKey: string;
  fetch?: FetchLike;
  /** Lease of a call when the update names none, ms; default 60 000. */
  holdMs?: number;
  /** Per request, ms; default 15 000 (a lease waits up to 10 s for a busy channel). */
  timeoutMs?: number;
}

/** Longest a claim round holds the receiver's claim lease. */
const CLAIM_HOLD_MS = 5 * 60_000;

/**
 * The channel store at a facilitator: every skill server of the receiver the key is bound to takes
 * a payer's channel through it (a lease per call, one claim round at a time).
 *
 * @example
 * const key = process.env.RECEIVER_KEY!;
 * serve(skills, { facilitatorUrl: 'https://facilitator.example', facilitatorApiKey: key, channels: { store: hostedChannelStore({ url: 'https://facilitator.example', apiKey: key }) } });
 */
export function hostedChannelStore(options: HostedStoreOptions): ChannelStore {
  const base = `${options.url.replace(/\/+$/, '')}/hosted-channels`;
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const headers = { authorization: `Bearer ${options.apiKey}`, accept: 'application/json' };
  const ask = async (path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    const init: RequestInit =
      body === undefined
        ? { method: 'GET', headers }
        : { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) };
    const answer = await exchange(`${base}${path}`, init, {
      fetch: doFetch,
      timeoutMs: options.timeoutMs ?? 15_000,
      retries: 0,
      what: `channel store ${base}${path}`,
    });
    const parsed = parseJson(answer.text);
    const json = parsed.ok && isRecord(parsed.value) ? parsed.value : {};
    return { status: answer.status, json };
  };
  const fail = (path: string, reply: { status: number; json: Record<string, unknown> }) =>
    new Error(`channel store ${path} answered ${reply.status}: ${excerpt(String(reply.json.error ?? ''))}`);

  return {
    async update(channelId, work, hint) {
      const leased = await ask('/lease', {
        channelId,
        holdMs: Math.min(hint?.holdMs ?? options.holdMs ?? 60_000, 15 * 60_000),
        ...(hint?.config ? { config: hint.config } : {}),
      });
      if (leased.status !== 200 || typeof leased.json.lease !== 'string') throw fail('/lease', leased);
      const lease = leased.json.lease;
      const current = (leased.json.state as ChannelState | null) ?? undefined;
      let change: Awaited<ReturnType<typeof work>>;
      try {
        change = await work(current);
      } catch (error) {
        await ask('/commit', { channelId, lease }).catch(() => undefined);
        throw error;
      }
      const committed = await ask('/commit', { channelId, lease, ...(change.next === undefined ? {} : { next: change.next }) });
      if (committed.status !== 200) throw fail('/commit', committed);
      return change.value;
    },
    async get(channelId: Hex) {
      const reply = await ask(`/${channelId}`);
      if (reply.status !== 200) throw fail(`/${channelId}`, reply);
      return (reply.json.state as ChannelState | null) ?? undefined;
    },
    async list() {
      const reply = await ask('/');
      if (reply.status !== 200 || !Array.isArray(reply.json.channels)) throw fail('/', reply);
      return reply.json.channels as ChannelState[];
    },
    async claims(work) {
      const leased = await ask('/claims/lease', { holdMs: CLAIM_HOLD_MS });
      if (leased.status === 409) return undefined;
      if (leased.status !== 200 || typeof leased.json.lease !== 'string') throw fail('/claims/lease', leased);
      try {
        return await work();
      } finally {
        await ask('/claims/release', { lease: leased.json.lease }).catch(() => undefined);
      }
    },
    close: async () => {},
  };
}
