/**
 * The one way pages talk to the registry: same-origin JSON with the session cookies. An error
 * answer becomes an ApiError carrying the registry's `{error, code, requestId}`, so every view
 * can show the message and the request id. A 401 on a signed-in call refreshes the session once
 * (the HttpOnly refresh cookie) and retries.
 */
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

export interface ApiResult<T> {
  data: T;
  headers: Headers;
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
export function refreshSession(): Promise<boolean> {
  if (!sessionHint.get()) return Promise.resolve(false);
  refreshing ??= fetch('/auth/refresh', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
    .then((res) => res.ok)
    .catch(() => false)
    .then((ok) => {
      if (!ok) sessionHint.set(false);
      return ok;
    })
    .finally(() => {
      refreshing = undefined;
    });
  return refreshing;
}

async function send(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(path, { credentials: 'same-origin', ...init });
  } catch {
    throw new ApiError('The registry could not be reached. Check your connection and try again.', 0, 'NETWORK', undefined);
  }
}

async function toError(res: Response): Promise<ApiError> {
  const requestId = res.headers.get('x-request-id') ?? undefined;
  try {
    const body = (await res.json()) as { error?: unknown; code?: unknown; requestId?: unknown };
    if (typeof body.error === 'string') {
      return new ApiError(
        body.error,
        res.status,
        typeof body.code === 'string' ? body.code : 'ERROR',
        typeof body.requestId === 'string' ? body.requestId : requestId,
      );
    }
  } catch {
    // not the registry's error shape: fall through to a generic message
  }
  return new ApiError(`The registry answered ${res.status} ${res.statusText}`.trim(), res.status, `HTTP_${res.status}`, requestId);
}

/** `GET`/`POST`/… a registry path; resolves with the parsed body and the headers (for X-Next-Cursor). */
export async function request<T>(
  path: string,
  options: { method?: string; body?: unknown; signal?: AbortSignal } = {},
): Promise<ApiResult<T>> {
  const init: RequestInit = { method: options.method ?? 'GET', headers: { accept: 'application/json' } };
  if (options.signal) init.signal = options.signal;
  if (options.body !== undefined) {
    init.headers = { ...init.headers, 'content-type': 'application/json' };
    init.body = JSON.stringify(options.body);
  }
  let res = await send(path, init);
  if (res.status === 401 && !path.startsWith('/auth/') && (await refreshSession())) res = await send(path, init);
  if (!res.ok) throw await toError(res);
  return { data: (await res.json()) as T, headers: res.headers };
}

export const api = {
  get: async <T>(path: string, signal?: AbortSignal) => (await request<T>(path, signal ? { signal } : {})).data,
  post: async <T>(path: string, body: unknown) => (await request<T>(path, { method: 'POST', body })).data,
  patch: async <T>(path: string, body: unknown) => (await request<T>(path, { method: 'PATCH', body })).data,
  delete: async <T>(path: string) => (await request<T>(path, { method: 'DELETE' })).data,
};

/** Any thrown value as an ApiError, so views show one kind of error box. */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(error instanceof Error ? error.message : String(error), 0, 'CLIENT', undefined);
}
