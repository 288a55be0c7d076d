/**
 * One JSON-RPC request over fetch, for the SDK's few chain reads (an authorization's state, a
 * payment channel's balance): no client library state, a timeout per request.
 */

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
 * @throws Error (from the returned function) when the RPC cannot be reached or answers an error
 */
export function jsonRpc(rpcUrl: string, options: JsonRpcOptions = {}): (method: string, params: unknown[]) => Promise<unknown> {
  const doFetch = options.fetch ?? ((input: string, init?: RequestInit) => globalThis.fetch(input, init));
  const timeoutMs = options.timeoutMs ?? 5000;
  let id = 0;
  return async (method, params) => {
    const res = await doFetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await res.json().catch(() => undefined)) as { result?: unknown; error?: { message?: string } } | undefined;
    if (!res.ok || !body || body.error || body.result === undefined) {
      throw new Error(`RPC ${method} failed: ${body?.error?.message ?? `HTTP ${res.status}`}`);
    }
    return body.result;
  };
}
