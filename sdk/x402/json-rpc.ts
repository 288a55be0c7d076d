/**
 * One JSON-RPC request over fetch, for the SDK's few chain reads (an authorization's state, a
 * payment channel's balance): no client library state, through the SDK's HTTP core (a timeout,
 * a bounded read, no redirects).
 */
import { MarketError } from '../http/errors';
import { exchange, type FetchLike, isRecord, parseJson } from '../http/exchange';

/** Options of {@link jsonRpc}. */
export interface JsonRpcOptions {
  /** Per JSON-RPC request; default 5000 ms. */
  timeoutMs?: number;
  fetch?: (input: string, init?: RequestInit) => Promise<Response>;
}

/**
 * A function sending `method(params)` to `rpcUrl` and returning its `result`.
 *
 * @example const block = await jsonRpc('https://mainnet.base.org')('eth_blockNumber', []);
 * @throws MarketError (from the returned function) when the RPC cannot be reached or answers an error
 */
export function jsonRpc(rpcUrl: string, options: JsonRpcOptions = {}): (method: string, params: unknown[]) => Promise<unknown> {
  const custom = options.fetch;
  const doFetch: FetchLike = (input, init) => (custom ? custom(String(input), init) : globalThis.fetch(input, init));
  const timeoutMs = options.timeoutMs ?? 5000;
  let id = 0;
  return async (method, params) => {
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
    };
    const answer = await exchange(rpcUrl, init, { fetch: doFetch, timeoutMs, retries: 0, what: `RPC ${method}` });
    const parsed = parseJson(answer.text);
    const body = (parsed.ok && isRecord(parsed.value) ? parsed.value : undefined) as
      | { result?: unknown; error?: { message?: string } }
      | undefined;
    if (answer.status < 200 || answer.status > 299 || !body || body.error || body.result === undefined) {
      throw new MarketError('invalid_response', `RPC ${method} failed: ${body?.error?.message ?? `HTTP ${answer.status}`}`, {
        status: answer.status,
      });
    }
    return body.result;
  };
}
