/**
 * The SDK's HTTP core, one exchange as every client needs it: a request under a timeout and the
 * caller's signal, the whole body read (bounded), and no-answer failures retried with the very
 * same request (a payment proof is re-sent as is, never re-signed).
 */
import { MarketError, NoAnswerError } from './errors';
import { readLimited } from './read-limited';
import { sleep } from './wait';

/** The part of `fetch` the SDK uses (any WHATWG-compatible implementation). */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Largest response body read from any server. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** A response with its body already read. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

export interface ExchangeOptions {
  fetch: FetchLike;
  timeoutMs: number;
  retries: number;
  signal?: AbortSignal | undefined;
  /** For error messages: `registry` or the skill slug. */
  what: string;
}

async function readBody(response: Response): Promise<string> {
  const text = await readLimited(response.body, MAX_RESPONSE_BYTES);
  if (text === undefined)
    throw new MarketError('invalid_response', `The answer is larger than ${MAX_RESPONSE_BYTES} bytes`, { status: response.status });
  return text;
}

/**
 * Sends `url` + `init` and reads the answer. A failure with no answer (refused, reset, dropped
 * while reading, timed out) is retried with identical headers and body, `retries` times, after
 * 50 ms, 100 ms, …: a payment proof is re-sent as is, never re-signed.
 *
 * @throws MarketError('aborted') when the caller's signal fires; NoAnswerError('network_error') after the last attempt
 */
export async function exchange(url: string, init: RequestInit, options: ExchangeOptions): Promise<Answer> {
  for (let attempt = 0; ; attempt++) {
    if (options.signal?.aborted) throw aborted(options);
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    try {
      const response = await options.fetch(url, { redirect: 'error', ...init, signal });
      return { status: response.status, headers: response.headers, text: await readBody(response) };
    } catch (error) {
      if (error instanceof MarketError) throw error;
      if (options.signal?.aborted) throw aborted(options, error);
      if (attempt >= options.retries) {
        const why = timeout.aborted ? `no answer within ${options.timeoutMs} ms` : describe(error);
        throw new NoAnswerError('network_error', `${options.what}: ${why} (after ${attempt + 1} attempt${attempt ? 's' : ''})`, {
          cause: error,
        });
      }
      await sleep(50 * 2 ** attempt);
    }
  }
}

function aborted(options: ExchangeOptions, cause?: unknown): MarketError {
  return new MarketError('aborted', `${options.what}: aborted by the caller`, { cause });
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause as { code?: string; message?: string } | undefined;
    const code = cause?.code ?? (error as { code?: string }).code;
    // Node's fetch says only "fetch failed"; the reason (e.g. "unexpected redirect") is its cause's.
    const message = cause?.message && !error.message.includes(cause.message) ? `${error.message}: ${cause.message}` : error.message;
    return code ? `${message} (${code})` : message;
  }
  return String(error);
}

/** JSON.parse that reports failure instead of throwing. */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
