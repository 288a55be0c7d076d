/**
 * The skill server's side of the standard facilitator API: `POST /verify`, `POST /settle`
 * (`{x402Version, paymentPayload, paymentRequirements}`) and `GET /supported`, plus our
 * facilitator's `GET /settlements/…` (what became of an authorization whose settle answer was
 * lost). Answers are validated; anything unexpected becomes a FacilitatorUnavailableError.
 */
import {
  X402Error,
  parseSettleResponse,
  toV1Name,
  type DecodedPayment,
  type PaymentRequirements,
  type SettleResponse,
} from '../x402/index';
import { FacilitatorUnavailableError, excerpt } from './errors';

/** Answer of `/verify`. */
export interface VerifyResult {
  isValid: boolean;
  invalidReason?: string;
  invalidMessage?: string;
  payer?: string;
}

export interface FacilitatorClientOptions {
  /** Base URL, e.g. `http://localhost:3001` or `https://x402.org/facilitator`. */
  url: string;
  fetch?: typeof fetch;
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
 * may be asked again), `pending`, `settled` (with the transaction), `failed` (with the reason), or
 * `unknown` (this facilitator has no record of it, or does not answer such questions).
 */
export interface SettlementOutcome {
  status: 'unsettled' | 'pending' | 'settled' | 'failed' | 'unknown';
  transaction: string;
  reason?: string;
}

export interface FacilitatorClient {
  verify(payment: DecodedPayment, requirements: PaymentRequirements, resource: ResourceHint): Promise<VerifyResult>;
  settle(payment: DecodedPayment, requirements: PaymentRequirements, resource: ResourceHint): Promise<SettleResponse>;
  /** `GET /settlements/:network/:asset/:payer/:nonce`. */
  settlement(requirements: PaymentRequirements, payer: string, nonce: string): Promise<SettlementOutcome>;
  /** The (x402Version, scheme, network) kinds it supports. */
  supported(timeoutMs?: number): Promise<{ x402Version: number; scheme: string; network: string }[]>;
}

/** What v1 requirements carry besides the terms. */
export interface ResourceHint {
  url: string;
  description: string;
}

export function createFacilitatorClient(options: FacilitatorClientOptions): FacilitatorClient {
  const base = options.url.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (options.userAgent) headers['user-agent'] = options.userAgent;
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  const { 'content-type': _, ...getHeaders } = headers;

  const post = async (path: string, body: unknown, timeoutMs: number): Promise<{ status: number; json: unknown; text: string }> => {
    let res: Response;
    let text: string;
    try {
      res = await doFetch(`${base}${path}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await res.text();
    } catch (error) {
      throw new FacilitatorUnavailableError(`facilitator ${base} did not answer ${path}: ${(error as Error)?.message ?? String(error)}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text };
  };
  const request = (payment: DecodedPayment, requirements: PaymentRequirements, resource: ResourceHint) => ({
    x402Version: payment.x402Version,
    paymentPayload: payment.original,
    paymentRequirements: payment.x402Version === 2 ? requirements : v1Requirements(payment, requirements, resource),
  });

  return {
    async verify(payment, requirements, resource) {
      const { status, json, text } = await post('/verify', request(payment, requirements, resource), options.verifyTimeoutMs ?? 10_000);
      if (isRecord(json) && typeof json.isValid === 'boolean' && (status === 200 || (status === 400 && json.isValid === false))) {
        const result: VerifyResult = { isValid: json.isValid };
        if (typeof json.invalidReason === 'string') result.invalidReason = json.invalidReason.slice(0, 200);
        if (typeof json.invalidMessage === 'string') result.invalidMessage = json.invalidMessage.slice(0, 500);
        if (typeof json.payer === 'string') result.payer = json.payer;
        return result;
      }
      throw new FacilitatorUnavailableError(`facilitator /verify answered ${status}: ${excerpt(text)}`);
    },
    async settle(payment, requirements, resource) {
      const { status, json, text } = await post('/settle', request(payment, requirements, resource), options.settleTimeoutMs ?? 30_000);
      try {
        return parseSettleResponse(json);
      } catch (error) {
        if (!(error instanceof X402Error)) throw error;
        throw new FacilitatorUnavailableError(`facilitator /settle answered ${status}: ${excerpt(text)}`);
      }
    },
    async settlement(requirements, payer, nonce) {
      const path = `/settlements/${encodeURIComponent(requirements.network)}/${requirements.asset}/${payer}/${nonce}`;
      let res: Response;
      let json: unknown;
      try {
        res = await doFetch(`${base}${path}`, { headers: getHeaders, signal: AbortSignal.timeout(options.verifyTimeoutMs ?? 10_000) });
        json = (await res.json().catch(() => undefined)) as unknown;
      } catch (error) {
        throw new FacilitatorUnavailableError(`facilitator ${base} did not answer ${path}: ${(error as Error)?.message ?? String(error)}`);
      }
      // 404 (no record, or no such route) and 405: a facilitator that cannot tell.
      if (res.status === 404 || res.status === 405) return { status: 'unknown', transaction: '' };
      const status = isRecord(json) ? json.status : undefined;
      if (
        res.status !== 200 ||
        !isRecord(json) ||
        (status !== 'unsettled' && status !== 'pending' && status !== 'settled' && status !== 'failed')
      ) {
        throw new FacilitatorUnavailableError(`facilitator ${path} answered ${res.status}`);
      }
      const outcome: SettlementOutcome = { status, transaction: typeof json.transaction === 'string' ? json.transaction : '' };
      if (typeof json.reason === 'string') outcome.reason = json.reason.slice(0, 200);
      return outcome;
    },
    async supported(timeoutMs = 3000) {
      let res: Response;
      try {
        res = await doFetch(`${base}/supported`, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
      } catch (error) {
        throw new FacilitatorUnavailableError(`facilitator ${base} cannot be reached: ${(error as Error)?.message ?? String(error)}`);
      }
      const json = (await res.json().catch(() => undefined)) as unknown;
      if (!res.ok || !isRecord(json) || !Array.isArray(json.kinds)) {
        throw new FacilitatorUnavailableError(`facilitator ${base}/supported answered ${res.status}`);
      }
      return json.kinds
        .filter(isRecord)
        .map((k) => ({ x402Version: Number(k.x402Version), scheme: String(k.scheme), network: String(k.network) }));
    },
  };
}

/** v1 requirements for a v1 payload: `maxAmountRequired`, the network as the payload names it, resource fields. */
function v1Requirements(payment: DecodedPayment, requirements: PaymentRequirements, resource: ResourceHint): Record<string, unknown> {
  const named = (payment.original as { network?: unknown }).network;
  return {
    scheme: requirements.scheme,
    network: typeof named === 'string' ? named : (toV1Name(requirements.network) ?? requirements.network),
    maxAmountRequired: requirements.amount,
    resource: resource.url,
    description: resource.description,
    mimeType: 'application/json',
    payTo: requirements.payTo,
    maxTimeoutSeconds: requirements.maxTimeoutSeconds,
    asset: requirements.asset,
    extra: requirements.extra,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
