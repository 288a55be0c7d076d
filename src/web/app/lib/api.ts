/**
 * How pages talk to the registry: the SDK's one registry client, on the page's own origin with the
 * session cookies. A 401 on a signed-in call refreshes the session once (the HttpOnly refresh
 * cookie) and retries. Any failure becomes an ApiError, which every view shows the same way: the
 * registry's own words, its code and the request id.
 */
import { MarketError, REGISTRY_ROUTES, RegistryClient, RegistryError } from 'skill-market/registry';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly requestId: string | undefined,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let refreshing: Promise<boolean> | undefined;

const SIGNED_IN = 'market.signed-in';

/**
 * Whether this browser signed in and has not signed out: the session cookies are HttpOnly, so the
 * page keeps this hint to skip a refresh that cannot succeed (a visitor who never signed in).
 */
export const sessionHint = {
  get: () => localStorage.getItem(SIGNED_IN) === '1',
  set: (on: boolean) => (on ? localStorage.setItem(SIGNED_IN, '1') : localStorage.removeItem(SIGNED_IN)),
};

/** One refresh at a time, however many calls met a 401 together. */
function refreshSession(): Promise<boolean> {
  if (!sessionHint.get()) return Promise.resolve(false);
  // Through the registry client: the refresh cookie is sent, and a 401 on /auth/ never refreshes again.
  refreshing ??= registry
    .refresh()
    .then(
      () => true,
      () => false,
    )
    .then((ok) => {
      if (!ok) sessionHint.set(false);
      return ok;
    })
    .finally(() => {
      refreshing = undefined;
    });
  return refreshing;
}

/** fetch with the session cookies; a 401 outside /auth/ refreshes the session once and sends again. */
async function pageFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const send = () => fetch(input, { ...init, credentials: 'same-origin' });
  const res = await send();
  const path = typeof input === 'string' ? input : input instanceof URL ? input.pathname : new URL(input.url).pathname;
  if (res.status === 401 && !path.startsWith('/auth/') && (await refreshSession())) return send();
  return res;
}

/** The SDK's client with the paged lists only pages read (the next page's cursor from X-Next-Cursor). */
class PageRegistry extends RegistryClient {
  /** One page of the operators' queue. */
  reportQueue(query: { status?: 'open' | 'closed'; limit?: number; cursor?: string }, signal?: AbortSignal) {
    return this.page(REGISTRY_ROUTES.reportQueue, { query }, { signal }, 'report queue');
  }

  /** One page of the caller's own reports. */
  ownReports(query: { limit?: number; cursor?: string }, signal?: AbortSignal) {
    return this.page(REGISTRY_ROUTES.ownReports, { query }, { signal }, 'your reports');
  }
}

/** The registry that served this page. Views retry by hand (Try again), so the client does not. */
export const registry = new PageRegistry({ apiUrl: '', cookies: true, fetch: pageFetch, retry: { attempts: 1 } });

/** `GET`/`POST` a JSON path of this server that is not part of the registry API (page settings, the dev demo wallet). */
export async function pageJson<T>(path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await pageFetch(path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw unreachable();
  }
  const json = (await res.json().catch(() => undefined)) as { error?: unknown; code?: unknown; requestId?: unknown } | undefined;
  if (!res.ok) {
    const requestId = typeof json?.requestId === 'string' ? json.requestId : (res.headers.get('x-request-id') ?? undefined);
    const message = typeof json?.error === 'string' ? json.error : `The server answered ${res.status} ${res.statusText}`.trim();
    throw new ApiError(message, res.status, typeof json?.code === 'string' ? json.code : `HTTP_${res.status}`, requestId);
  }
  return json as T;
}

const unreachable = () => new ApiError('The registry could not be reached. Check your connection and try again.', 0, 'NETWORK', undefined);

/** Any thrown value as an ApiError, so views show one kind of error box. */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof RegistryError) {
    if (!error.status) return unreachable();
    return new ApiError(error.error ?? error.message, error.status, error.registryCode ?? `HTTP_${error.status}`, error.requestId);
  }
  if (error instanceof MarketError) return new ApiError(error.message, error.status ?? 0, error.code, undefined);
  return new ApiError(error instanceof Error ? error.message : String(error), 0, 'CLIENT', undefined);
}

/** Runs a registry call; its failure arrives as an ApiError (for `instanceof` checks on status). */
export async function call<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asApiError(error);
  }
}
