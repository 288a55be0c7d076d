/**
 * The creator's registry calls, authenticated with an API key: register (`POST /skills`, an
 * upsert by name), update (`PATCH /skills/:slug`), record a call (`POST /analytics/call`) and list
 * one's own skills (`GET /creators/me/skills`). It trusts no server: every answer is checked, error
 * text is read from `message` then `error`, and 429, 5xx and network failures are retried with
 * backoff (other 4xx are not).
 */
import { RegistryApiError, excerpt } from './errors';

/** Retry policy of registry requests. */
export interface RetryOptions {
  /** Tries in all, first included; default 3. */
  attempts?: number;
  /** First back-off delay in ms, doubled each time (with jitter); default 300. */
  baseDelayMs?: number;
  /** Longest delay in ms, also the cap on a Retry-After; default 5000. */
  maxDelayMs?: number;
}

export interface RegistryClientOptions {
  /** Registry base URL, e.g. `https://registry.example.com`. */
  apiUrl: string;
  /** Creator API key (`sk_…`). */
  apiKey: string;
  fetch?: typeof fetch;
  /** Per request; default 15 s. */
  timeoutMs?: number;
  retry?: RetryOptions;
  userAgent?: string;
}

/** What the registry says about one skill (the fields this SDK relies on). */
export interface RegisteredSkill {
  slug: string;
  id?: string;
  name?: string;
}

export interface RegistryClient {
  /** Registers or updates the caller's skill of that name; `created` is true on 201. */
  register(body: Record<string, unknown>): Promise<RegisteredSkill & { created: boolean }>;
  update(slug: string, data: Record<string, unknown>): Promise<void>;
  /** One attempt, no retries (call tracking has its own schedule). */
  recordCall(body: { skillId: string; amount?: string; paymentRef?: string }): Promise<void>;
  ownSkills(): Promise<RegisteredSkill[]>;
}

type Check<T> = (json: unknown) => T | undefined;

export function createRegistryClient(options: RegistryClientOptions): RegistryClient {
  const base = options.apiUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const attempts = Math.max(1, options.retry?.attempts ?? 3);
  const baseDelayMs = options.retry?.baseDelayMs ?? 300;
  const maxDelayMs = options.retry?.maxDelayMs ?? 5000;

  const once = async <T>(method: string, path: string, body: unknown, check: Check<T>): Promise<{ value: T; status: number }> => {
    const headers: Record<string, string> = { authorization: `Bearer ${options.apiKey}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (options.userAgent) headers['user-agent'] = options.userAgent;
    let res: Response;
    let text: string;
    try {
      res = await doFetch(`${base}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await res.text();
    } catch (error) {
      const reason =
        (error as Error)?.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : ((error as Error)?.message ?? String(error));
      throw new RegistryApiError(0, `registry ${base} could not be reached: ${reason}`);
    }
    const json = parseJson(text);
    if (!res.ok) {
      const reason = errorReason(json) ?? `the registry answered ${res.status}`;
      throw new RegistryApiError(res.status, `${reason} (HTTP ${res.status})`, excerpt(text), retryAfterMs(res.headers.get('retry-after')));
    }
    const value = check(json);
    if (value === undefined)
      throw new RegistryApiError(
        res.status,
        `unexpected answer from ${method} ${path} (HTTP ${res.status}): ${excerpt(text)}`,
        excerpt(text),
      );
    return { value, status: res.status };
  };

  const withRetries = async <T>(method: string, path: string, body: unknown, check: Check<T>): Promise<{ value: T; status: number }> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await once(method, path, body, check);
      } catch (error) {
        if (!(error instanceof RegistryApiError) || !error.retryable || attempt >= attempts) throw error;
        const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.5);
        await sleep(Math.min(maxDelayMs, Math.max(backoff, error.retryAfterMs ?? 0)));
      }
    }
  };

  return {
    async register(body) {
      const { value, status } = await withRetries('POST', '/skills', body, asSkill);
      return { ...value, created: status === 201 };
    },
    async update(slug, data) {
      await withRetries('PATCH', `/skills/${encodeURIComponent(slug)}`, data, (json) => (isRecord(json) ? json : undefined));
    },
    async recordCall(body) {
      await once('POST', '/analytics/call', body, (json) => (isRecord(json) ? json : undefined));
    },
    async ownSkills() {
      const { value } = await withRetries('GET', '/creators/me/skills', undefined, (json) => {
        if (!Array.isArray(json)) return undefined;
        const skills = json.map(asSkill);
        return skills.every((s) => s !== undefined) ? (skills as RegisteredSkill[]) : undefined;
      });
      return value;
    },
  };
}

function asSkill(json: unknown): RegisteredSkill | undefined {
  if (!isRecord(json) || typeof json.slug !== 'string' || json.slug === '' || json.slug.length > 200) return undefined;
  const out: RegisteredSkill = { slug: json.slug };
  if (json.id !== undefined) {
    if (typeof json.id !== 'string' || json.id === '' || json.id.length > 100) return undefined;
    out.id = json.id;
  }
  if (typeof json.name === 'string') out.name = json.name;
  return out;
}

/** The error text of a registry answer: `message`, then `error`. */
export function errorReason(json: unknown): string | undefined {
  if (!isRecord(json)) return undefined;
  for (const key of ['message', 'error'] as const) {
    const value = json[key];
    if (typeof value === 'string' && value.trim() !== '') return value.slice(0, 300);
  }
  return undefined;
}

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
