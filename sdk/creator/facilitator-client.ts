/**
 * The skill server's side of the standard facilitator API: `POST /verify`, `POST /settle` and
 * `GET /supported`, plus our facilitator's `GET /settlements/…` (what became of an authorization
 * whose settle answer was lost) and `POST /settlements` (the same for many at once). Requests are built and answers checked with the x402 module's
 * facilitator protocol; anything unexpected becomes a FacilitatorUnavailableError.
 */
import {
  X402Error,
  facilitatorRequest,
  parseSettleResponse,
  parseSettlementStatus,
  parseSettlementsAnswer,
  parseSupportedResponse,
  MAX_SETTLEMENT_QUERY,
  parseVerifyResponse,
  type DecodedPayment,
  type PaymentRequirements,
  type ResourceHint,
  SETTLEMENT_MODE_HEADER,
  type SettleResponse,
  type SettlementMode,
  type SupportedKind,
  type VerifyResponse,
} from '../x402/index';
import { excerpt, NoAnswerError } from '../http/errors';
import { type Answer, exchange, type FetchLike, isRecord, parseJson } from '../http/exchange';
import { FacilitatorUnavailableError } from './errors';

export type { ResourceHint };

export interface FacilitatorClientOptions {
  /** Base URL, e.g. `http://localhost:3001` or `https://x402.org/facilitator`. */
  url: string;
  fetch?: FetchLike;
  /** Per /verify request; default 10 s. */
  verifyTimeoutMs?: number;
  /** Per /settle request (it waits for the transaction); default 30 s. */
  settleTimeoutMs?: number;
  userAgent?: string;
  /** Sent as `Authorization: Bearer <apiKey>` to facilitators that require a key. */
  apiKey?: string;
}

/**
 * What a facilitator says became of an authorization: `unsettled` (verified, never settled: settle
 * may be asked again), `pending`, `settled` (with the transaction), `failed` (with the reason),
 * `none` (it never accepted this authorization: `POST /settlements` answered null), or `unknown`
 * (it cannot tell: no record by `GET /settlements/…`, or it does not answer such questions).
 */
export interface SettlementOutcome {
  status: 'unsettled' | 'pending' | 'settled' | 'failed' | 'none' | 'unknown';
  transaction: string;
  reason?: string;
}

export interface FacilitatorClient {
  verify(payment: DecodedPayment, requirements: PaymentRequirements, resource: ResourceHint): Promise<VerifyResponse>;
  /**
   * `mode` asks our facilitator to answer `confirmed` (mined) or `broadcast` (accepted by the node);
   * facilitators that know no modes ignore it and answer once mined.
   */
  settle(
    payment: DecodedPayment,
    requirements: PaymentRequirements,
    resource: ResourceHint,
    mode?: SettlementMode,
  ): Promise<SettleResponse>;
  /** `GET /settlements/:network/:asset/:payer/:nonce`. */
  settlement(requirements: PaymentRequirements, payer: string, nonce: string): Promise<SettlementOutcome>;
  /**
   * What became of several authorizations, in order: one `POST /settlements` per
   * {@link MAX_SETTLEMENT_QUERY}, or one `GET` each from a facilitator without that route.
   */
  settlements(items: readonly { requirements: PaymentRequirements; payer: string; nonce: string }[]): Promise<SettlementOutcome[]>;
  /** The (x402Version, scheme, network) kinds it supports. */
  supported(timeoutMs?: number): Promise<SupportedKind[]>;
  /**
   * `/verify` or `/settle` of a payload of any scheme: the answer's JSON as sent (a channel's
   * `extra` carries its state, which the `exact` parsers leave out).
   */
  forward(path: '/verify' | '/settle', paymentPayload: unknown, paymentRequirements: unknown): Promise<Record<string, unknown>>;
}

interface Reply {
  status: number;
  json: unknown;
  text: string;
}

export function createFacilitatorClient(options: FacilitatorClientOptions): FacilitatorClient {
  const base = options.url.replace(/\/+$/, '');
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.userAgent) headers['user-agent'] = options.userAgent;
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  /** One request through the SDK's HTTP core (bounded read, no redirects, a timeout, no retry); its JSON parsed once. */
  const send = async (path: string, timeoutMs: number, body?: unknown, extra?: Record<string, string>): Promise<Reply> => {
    const init: RequestInit =
      body === undefined
        ? { method: 'GET', headers }
        : { method: 'POST', headers: { ...headers, 'content-type': 'application/json', ...extra }, body: JSON.stringify(body) };
    let answer: Answer;
    try {
      answer = await exchange(`${base}${path}`, init, { fetch: doFetch, timeoutMs, retries: 0, what: `facilitator ${base}${path}` });
    } catch (error) {
      // NoAnswerError names the facilitator; an oversized answer does not.
      const why = error instanceof NoAnswerError ? error.message : `facilitator ${base}${path}: ${(error as Error).message}`;
      throw new FacilitatorUnavailableError(why, { cause: error });
    }
    const parsed = parseJson(answer.text);
    return { status: answer.status, json: parsed.ok ? parsed.value : undefined, text: answer.text };
  };

  /** The answer checked by `parse`; a malformed one means the facilitator cannot be relied on. */
  const read = <T>(reply: Reply, path: string, parse: (value: unknown) => T): T => {
    try {
      return parse(reply.json);
    } catch (error) {
      if (!(error instanceof X402Error)) throw error;
      throw new FacilitatorUnavailableError(`facilitator ${path} answered ${reply.status}: ${excerpt(reply.text)}`);
    }
  };

  /** False once the facilitator answered POST /settlements 404 or 405 (not ours, or older). */
  let settlementsRoute = true;

  const client: FacilitatorClient = {
    async verify(payment, requirements, resource) {
      const reply = await send('/verify', options.verifyTimeoutMs ?? 10_000, facilitatorRequest(payment, requirements, resource));
      // Some facilitators answer an invalid payment 400 with the verdict; any other status is a fault.
      const verdict = reply.status === 200 || reply.status === 400 ? read(reply, '/verify', parseVerifyResponse) : undefined;
      if (!verdict || (reply.status === 400 && verdict.isValid)) {
        throw new FacilitatorUnavailableError(`facilitator /verify answered ${reply.status}: ${excerpt(reply.text)}`);
      }
      return verdict;
    },
    async settle(payment, requirements, resource, mode) {
      const reply = await send(
        '/settle',
        options.settleTimeoutMs ?? 30_000,
        facilitatorRequest(payment, requirements, resource),
        mode ? { [SETTLEMENT_MODE_HEADER]: mode } : undefined,
      );
      return read(reply, '/settle', parseSettleResponse);
    },
    async settlement(requirements, payer, nonce) {
      const path = `/settlements/${encodeURIComponent(requirements.network)}/${requirements.asset}/${payer}/${nonce}`;
      const reply = await send(path, options.verifyTimeoutMs ?? 10_000);
      // 404 (no record, or no such route) and 405: a facilitator that cannot tell.
      if (reply.status === 404 || reply.status === 405) return { status: 'unknown', transaction: '' };
      if (reply.status !== 200) throw new FacilitatorUnavailableError(`facilitator ${path} answered ${reply.status}`);
      const told = read(reply, path, parseSettlementStatus);
      return { status: told.status, transaction: told.transaction, ...(told.reason === undefined ? {} : { reason: told.reason }) };
    },
    async settlements(items) {
      const outcomes: SettlementOutcome[] = [];
      for (let i = 0; i < items.length; i += MAX_SETTLEMENT_QUERY) {
        const page = items.slice(i, i + MAX_SETTLEMENT_QUERY);
        if (settlementsRoute) {
          const authorizations = page.map(({ requirements, payer, nonce }) => ({
            network: requirements.network,
            asset: requirements.asset,
            payer,
            nonce,
          }));
          const reply = await send('/settlements', options.verifyTimeoutMs ?? 10_000, { authorizations });
          if (reply.status === 200) {
            const told = read(reply, '/settlements', parseSettlementsAnswer).settlements;
            if (told.length !== page.length) throw new FacilitatorUnavailableError('facilitator /settlements answered another count');
            for (const status of told) {
              outcomes.push(
                status
                  ? {
                      status: status.status,
                      transaction: status.transaction,
                      ...(status.reason === undefined ? {} : { reason: status.reason }),
                    }
                  : { status: 'none', transaction: '' },
              );
            }
            continue;
          }
          if (reply.status !== 404 && reply.status !== 405) {
            throw new FacilitatorUnavailableError(`facilitator /settlements answered ${reply.status}`);
          }
          settlementsRoute = false;
        }
        for (const { requirements, payer, nonce } of page) outcomes.push(await client.settlement(requirements, payer, nonce));
      }
      return outcomes;
    },
    async forward(path, paymentPayload, paymentRequirements) {
      const timeout = path === '/verify' ? (options.verifyTimeoutMs ?? 10_000) : (options.settleTimeoutMs ?? 30_000);
      const reply = await send(path, timeout, { x402Version: 2, paymentPayload, paymentRequirements });
      if ((reply.status !== 200 && reply.status !== 400) || !isRecord(reply.json)) {
        throw new FacilitatorUnavailableError(`facilitator ${path} answered ${reply.status}: ${excerpt(reply.text)}`);
      }
      return reply.json;
    },
    async supported(timeoutMs = 3000) {
      const reply = await send('/supported', timeoutMs);
      if (reply.status !== 200) throw new FacilitatorUnavailableError(`facilitator ${base}/supported answered ${reply.status}`);
      return read(reply, '/supported', parseSupportedResponse).kinds;
    },
  };
  return client;
}
