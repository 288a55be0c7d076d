import type { ChainConfig } from '../../src/config/chain';
import type { RegistryConfig } from '../../src/config';
import { authTestConfig, bearer, providerKeys } from '../support/auth';

/** A chain whose RPC refuses connections at once (the discard port), so no test reaches a public RPC. */
export function offlineChain(overrides: Partial<ChainConfig> = {}): ChainConfig {
  return {
    network: 'eip155:8453',
    usdcAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    usdcDecimals: 6,
    rpcUrl: 'http://127.0.0.1:9/',
    rpcTimeoutMs: 1000,
    balanceCacheMs: 5000,
    channelsFromBlock: 0n,
    ...overrides,
  };
}

/** Registry configuration for wallet tests: auth on, rate limits off, the given chain. */
export async function walletTestConfig(
  chain: ChainConfig = offlineChain(),
  overrides: Partial<RegistryConfig> = {},
): Promise<RegistryConfig> {
  return authTestConfig((await providerKeys()).publicKeyPem, { chain, ...overrides });
}

type Request = (path: string, init?: RequestInit) => Promise<Response>;

/** JSON calls to the wallet endpoints as `token`, answering `{status, body}`. */
export function walletCalls(request: Request, token: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await request(path, {
      method,
      headers: { ...bearer(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as any), text, headers: res.headers };
  };
  return {
    register: (address: string, label?: string | null) =>
      call('POST', '/wallet/generate', label === undefined ? { address } : { address, label }),
    active: () => call('GET', '/wallet'),
    one: (address: string) => call('GET', `/wallet/${address}`),
    all: () => call('GET', '/wallet/all'),
    label: (address: string, label: string | null) => call('PATCH', `/wallet/${address}`, { label }),
    revoke: (address: string) => call('DELETE', `/wallet/${address}`),
    call,
  };
}
