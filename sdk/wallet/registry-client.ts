import { findPrivateKeyMaterial, PRIVATE_KEY_REFUSAL } from './private-keys';

/** A spending wallet as the registry returns it. */
export interface WalletRecord {
  id: string;
  address: string;
  label: string | null;
  isActive: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** The active wallet with its live USDC balance (`balance` null and `balanceError` set when the chain could not be read). */
export interface ActiveWalletRecord extends WalletRecord {
  network: string;
  asset: string;
  /** Exact USDC with 6 decimals, e.g. "10.500000". */
  balance: string | null;
  /** Atomic units (10^-6 USDC) as a decimal string. */
  balanceAtomic: string | null;
  balanceCheckedAt: string | null;
  balanceError?: string;
}

/** The registry refused or answered something unexpected; status 0: refused here, nothing was sent. */
export class WalletApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: string,
  ) {
    super(message);
    this.name = 'WalletApiError';
  }
}

export interface WalletApiOptions {
  /** Registry base URL, e.g. `https://registry.example.com`. */
  apiUrl: string;
  /** An API key (`ck_…` or `sk_…`) or a session token. */
  apiKey: string;
  /** Injected for tests; default the global fetch. */
  fetch?: typeof fetch;
  /** Per request; default 15 s. */
  timeoutMs?: number;
}

/**
 * The registry's spending-wallet endpoints. Only addresses and labels are ever sent; anything
 * shaped like a private key or recovery phrase is refused before a request is made.
 *
 * @example
 * const api = walletApi({ apiUrl: 'http://localhost:3000', apiKey: process.env.MARKET_API_KEY! });
 * const active = await api.active(); // null when there is none
 */
export function walletApi(options: WalletApiOptions) {
  const { apiKey, fetch: doFetch = globalThis.fetch, timeoutMs = 15_000 } = options;
  if (!options.apiUrl) throw new TypeError('walletApi: apiUrl is required');
  if (!apiKey) throw new TypeError('walletApi: apiKey is required');
  const base = options.apiUrl.replace(/\/+$/, '');

  const call = async <T>(method: string, path: string, check: (v: unknown) => v is T, body?: unknown): Promise<T> => {
    if (findPrivateKeyMaterial({ path, body }) !== undefined) throw new WalletApiError(0, PRIVATE_KEY_REFUSAL, '');
    const res = await doFetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const reason =
        typeof json === 'object' && json !== null
          ? ((json as { message?: unknown; error?: unknown }).message ?? (json as { error?: unknown }).error)
          : undefined;
      throw new WalletApiError(res.status, typeof reason === 'string' ? reason : `The registry answered ${res.status}`, text.slice(0, 200));
    }
    if (!check(json)) throw new WalletApiError(res.status, `Unexpected answer from ${method} ${path}`, text.slice(0, 200));
    return json;
  };
  const at = (address: string) => `/wallet/${encodeURIComponent(address)}`;

  return {
    /** Registers an address (never a key) and makes it the active wallet. */
    register: (address: string, label?: string | null) =>
      call('POST', '/wallet/generate', isWallet, label === undefined ? { address } : { address, label }),
    /** The active wallet with its live balance, or null. */
    active: () => call('GET', '/wallet', (v): v is ActiveWalletRecord | null => v === null || isActiveWallet(v)),
    /** Every wallet, revoked ones included. */
    list: () => call('GET', '/wallet/all', (v): v is WalletRecord[] => Array.isArray(v) && v.every(isWallet)),
    /** Sets a label; null removes it. */
    setLabel: (address: string, label: string | null) => call('PATCH', at(address), isWallet, { label }),
    /** Revokes a wallet (funds on-chain are untouched); returns it with `revokedAt`. */
    revoke: async (address: string) =>
      (await call('DELETE', at(address), (v): v is { wallet: WalletRecord } => isWallet((v as { wallet?: unknown } | null)?.wallet)))
        .wallet,
  };
}

export type WalletApi = ReturnType<typeof walletApi>;

const stringOrNull = (v: unknown) => v === null || typeof v === 'string';

function isWallet(v: unknown): v is WalletRecord {
  if (typeof v !== 'object' || v === null) return false;
  const w = v as Record<string, unknown>;
  return (
    typeof w.id === 'string' &&
    typeof w.address === 'string' &&
    /^0x[0-9a-fA-F]{40}$/.test(w.address) &&
    stringOrNull(w.label) &&
    typeof w.isActive === 'boolean' &&
    typeof w.createdAt === 'string' &&
    stringOrNull(w.revokedAt)
  );
}

function isActiveWallet(v: unknown): v is ActiveWalletRecord {
  if (!isWallet(v)) return false;
  const w = v as unknown as Record<string, unknown>;
  return stringOrNull(w.balance) && stringOrNull(w.balanceAtomic) && typeof w.network === 'string';
}
