/**
 * Sending any route of the registry's route table on the SDK's HTTP core: the path filled from
 * its parameters, the query and the JSON body typed by the route's schemas, a credential when the
 * route's access level checks one, the answer checked against the route's answer schema, and
 * every error answer a {@link RegistryError} carrying the registry's `{error, code, requestId}`.
 * Requests that are safe to repeat (reads, idempotent writes) are retried when no answer came or
 * the registry answered 429 or 5xx, honouring Retry-After; other writes are sent once, since a
 * lost answer may mean they were applied.
 */
import { Kind, type Static, type TSchema } from '@sinclair/typebox';
import { excerpt, MarketError, NoAnswerError, RegistryError } from '../http/errors';
import { type Answer, exchange, type FetchLike, isRecord, parseJson } from '../http/exchange';
import { retryAfterMs, sleep } from '../http/wait';
import {
  NEXT_CURSOR_HEADER,
  needsCredential,
  type Route,
  type RouteAnswer,
  type RouteInput,
  type RouteMethod,
  type RouteResponse,
} from './contract/index';
import { type AnswerContext, readAnswer } from './read';

/**
 * The registry a client talks to unless told otherwise: `market registry` on this machine.
 *
 * @example
 * new RegistryClient({ apiUrl: process.env.MARKET_API_URL ?? DEFAULT_API_URL }); // else http://localhost:3000
 */
export const DEFAULT_API_URL = 'http://localhost:3000';

/** Retries of requests that are safe to repeat. */
export interface RetryOptions {
  /** Tries in all, the first included; default 3. */
  attempts?: number;
  /** First back-off delay in ms, doubled each time (with jitter); default 300. */
  baseDelayMs?: number;
  /** Longest delay in ms, also the cap on a Retry-After; default 5000. */
  maxDelayMs?: number;
}

/** Options of {@link RegistryClient}: where the registry is, how to sign in, and the transport's limits. */
export interface RegistryClientOptions {
  /** Registry base URL, e.g. `http://localhost:3000`; `''` for the page's own origin. */
  apiUrl: string;
  /** An API key (`sk_…`, `ck_…`) or a session token, sent as a Bearer credential. */
  apiKey?: string | undefined;
  /** The session cookies authenticate (a page on the registry's own origin); no key needed. */
  cookies?: boolean;
  fetch?: FetchLike;
  /** Per attempt, ms; default 15 000. */
  timeoutMs?: number;
  retry?: RetryOptions;
  userAgent?: string;
}

/** One page of a paged list; `nextCursor` (from X-Next-Cursor) is undefined on the last page. */
export interface Page<T> {
  items: T[];
  nextCursor: string | undefined;
}

/** Options of one {@link RegistryClient.call}, beside the route's own parts. */
export interface CallOptions {
  /** What the request is, in its errors' messages (`Registry <what> failed with 500: …`); default `GET /path`. */
  what?: string;
  /** The skill the request concerns, kept on its errors. */
  slug?: string | undefined;
  signal?: AbortSignal | undefined;
  /** A credential for this request only (an identity provider's token), in place of the API key. */
  bearer?: string;
  /** Whether the request needs a credential; by default when the route's access level checks one. */
  credential?: boolean;
}

/** The arguments of {@link RegistryClient.call} after the route: its input (optional when nothing in it is required), then options. */
export type CallArgs<R extends Route> =
  Record<never, never> extends RouteInput<R>
    ? [input?: RouteInput<R>, options?: CallOptions]
    : [input: RouteInput<R>, options?: CallOptions];

type PageItem<R extends Route> = RouteAnswer<R> extends readonly (infer Item)[] ? Item : never;
type Query = Record<string, string | number | boolean | undefined | null>;

interface SendOptions {
  what: string;
  slug?: string | undefined;
  query?: Query | undefined;
  body?: unknown;
  /** Needs a credential (an API key, a session token or the session cookies). */
  auth?: boolean;
  /** Safe to send again: retried on no answer, 429 and 5xx. */
  repeatable?: boolean;
  signal?: AbortSignal | undefined;
  /** A credential for this request only (an identity-provider token), in place of the API key. */
  bearer?: string;
}

const MAX_CURSOR_LENGTH = 512;
const segment = encodeURIComponent;

/**
 * The transport of {@link RegistryClient}: one route of the table sent and its answer read. The
 * client's methods are each one such call.
 */
export class RouteClient {
  private readonly base: string;
  private readonly fetch: FetchLike;
  private readonly timeoutMs: number;
  private readonly attempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(private readonly options: RegistryClientOptions) {
    this.base = options.apiUrl.replace(/\/+$/, '');
    const fetchImpl = options.fetch ?? globalThis.fetch;
    this.fetch = (input, init) => fetchImpl(input, init);
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.attempts = Math.max(1, options.retry?.attempts ?? 3);
    this.baseDelayMs = options.retry?.baseDelayMs ?? 300;
    this.maxDelayMs = options.retry?.maxDelayMs ?? 5000;
  }

  /** The registry base URL, without a trailing slash. */
  get url(): string {
    return this.base;
  }

  // Any route of the table

  /**
   * Sends one route of {@link REGISTRY_ROUTES} and answers its checked answer: `params` fill the
   * path, `query` the query string, `body` is sent as JSON (typed by the route's schemas). A
   * credential is sent when the client has one (required by routes whose access level checks
   * one); reads and idempotent writes are retried as the client's retry options say.
   *
   * @throws RegistryError on a non-2xx answer or no answer; MarketError('invalid_response') when
   * the answer does not fit the route's answer schema; MarketError('credentials_required')
   * without a credential for a route that needs one
   * @example
   * import { REGISTRY_ROUTES, RegistryClient } from 'skill-market/registry';
   *
   * const registry = new RegistryClient({ apiUrl: 'https://registry.example' });
   * const health = await registry.call(REGISTRY_ROUTES.health); // { status: 'ok', version, database }
   * const found = await registry.call(REGISTRY_ROUTES.discoverySearch, { query: { query: 'weather', limit: 5 } });
   */
  async call<R extends Route>(route: R, ...[input, options = {}]: CallArgs<R>): Promise<RouteAnswer<R>> {
    const answer = await this.exchange(route, input ?? {}, options);
    return this.check(answerSchema(route.response, answer.status), answer, options.what ?? describe(route), options.slug);
  }

  // The exchange

  /** Sends `route` with `input` and answers its 2xx answer unread. */
  protected exchange<R extends Route>(route: R, input: Partial<RouteInput<R>>, options: CallOptions): Promise<Answer> {
    const params = (input.params ?? {}) as Record<string, unknown>;
    const path = route.path.replace(/:(\w+)/g, (_, name: string) => segment(String(params[name])));
    // A write without a body sends `{}`: an empty JSON object, as every write is JSON.
    const body = input.body !== undefined || route.method !== 'POST' ? input.body : {};
    return this.send(route.method, path, {
      what: options.what ?? describe(route),
      slug: options.slug,
      query: input.query as Query | undefined,
      body,
      auth: options.credential ?? needsCredential(route.access),
      repeatable: route.method === 'GET' || route.idempotent === true,
      signal: options.signal,
      ...(options.bearer === undefined ? {} : { bearer: options.bearer }),
    });
  }

  /** One page of a paged list: the items checked against the route's answer, the next cursor from its header. */
  protected async page<R extends Route>(route: R, input: RouteInput<R>, options: CallOptions, what: string): Promise<Page<PageItem<R>>> {
    const answer = await this.exchange(route, input, options);
    const items = this.check(answerSchema(route.response, answer.status), answer, what) as PageItem<R>[];
    return { items, nextCursor: this.cursor(answer) };
  }

  protected check<S extends TSchema>(schema: S, answer: Answer, what: string, slug?: string): Static<S> {
    return readAnswer(schema, this.json(answer, what, slug), this.context(answer, what, slug));
  }

  protected context(answer: Answer, what: string, slug?: string): AnswerContext {
    return { what, status: answer.status, body: answer.text, slug };
  }

  protected json(answer: Answer, what: string, slug?: string): unknown {
    const parsed = parseJson(answer.text);
    if (!parsed.ok) {
      throw new MarketError('invalid_response', `The registry answered an invalid ${what}: not JSON (${excerpt(answer.text)})`, {
        status: answer.status,
        body: answer.text,
        slug,
      });
    }
    return parsed.value;
  }

  protected cursor(answer: Answer): string | undefined {
    const cursor = answer.headers.get(NEXT_CURSOR_HEADER) ?? undefined;
    if (cursor !== undefined && (cursor === '' || cursor.length > MAX_CURSOR_LENGTH)) {
      throw new MarketError('invalid_response', 'The registry answered an invalid X-Next-Cursor header', { status: answer.status });
    }
    return cursor;
  }

  /** Sends one request (retrying it when it is repeatable) and answers the 2xx answer; anything else throws. */
  private async send(method: RouteMethod, path: string, options: SendOptions): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.options.userAgent) headers['user-agent'] = this.options.userAgent;
    if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
    else if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    else if (options.auth && !this.options.cookies) {
      throw new MarketError('credentials_required', `The ${options.what} needs apiKey (an API key or a session token)`, {
        slug: options.slug,
      });
    }
    const init: RequestInit = { method, headers };
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(options.body);
    }
    const url = `${this.base}${path}${queryString(options.query)}`;
    const attempts = options.repeatable ? this.attempts : 1;
    for (let attempt = 1; ; attempt++) {
      let error: RegistryError;
      try {
        const answer = await exchange(url, init, {
          fetch: this.fetch,
          timeoutMs: this.timeoutMs,
          retries: 0,
          signal: options.signal,
          what: options.what,
        });
        if (answer.status >= 200 && answer.status < 300) return answer;
        error = registryError(answer, options);
      } catch (thrown) {
        if (!(thrown instanceof NoAnswerError)) throw thrown;
        const where = this.base || 'this origin';
        error = new RegistryError('registry_error', `The registry at ${where} could not be reached (${thrown.message})`, {
          status: 0,
          cause: thrown,
          slug: options.slug,
        });
      }
      if (!error.retryable || attempt >= attempts) throw error;
      const backoff = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.5);
      await sleep(Math.min(this.maxDelayMs, Math.max(backoff, error.retryAfterMs ?? 0)));
    }
  }
}

/** A route as its errors name it by default, e.g. `GET /skills/:slug`. */
const describe = (route: Route) => `${route.method} ${route.path}`;

/** The schema of a route's answer of `status`: its one schema, or the status's (else the first listed). */
function answerSchema(response: RouteResponse, status: number): TSchema {
  if (Kind in response) return response as TSchema;
  const byStatus = response as Record<number, TSchema>;
  return byStatus[status] ?? Object.values(byStatus)[0]!;
}

function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== null) params.set(key, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** A registry's error answer as the one error class: its text, code and request id kept. */
function registryError(answer: Answer, options: SendOptions): RegistryError {
  const parsed = parseJson(answer.text);
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : {};
  // Registries of the other SDK's kind put the text in `message`; ours in `error`.
  const text = [body.message, body.error].find((v): v is string => typeof v === 'string' && v.trim() !== '')?.slice(0, 300);
  const registryCode = typeof body.code === 'string' ? body.code.slice(0, 64) : undefined;
  const requestId = typeof body.requestId === 'string' ? body.requestId.slice(0, 128) : (answer.headers.get('x-request-id') ?? undefined);
  const notFound = answer.status === 404 && options.slug !== undefined && options.what.startsWith('skill');
  const message = notFound
    ? `No skill ${options.slug} in the registry`
    : `Registry ${options.what} failed with ${answer.status}${text ? `: ${text}` : ''}`;
  const wait = retryAfterMs(answer.headers.get('retry-after'));
  return new RegistryError(notFound ? 'skill_not_found' : 'registry_error', message, {
    status: answer.status,
    body: answer.text,
    ...(options.slug === undefined ? {} : { slug: options.slug }),
    ...(text === undefined ? {} : { error: text }),
    ...(registryCode === undefined ? {} : { registryCode }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(wait === undefined ? {} : { retryAfterMs: wait }),
  });
}
