/**
 * The registry endpoints a consumer uses: discovery (`/skills`, `/groups`), favorites and usage
 * records. Every answer is checked; every error becomes a RegistryError with status and excerpt.
 */
import { MarketError, RegistryError } from './errors';
import { exchange, isRecord, parseJson, type Answer } from './http';
import { parseFavorite, parseGroups, parseSkill, parseSkills } from './listing';
import type { Group, SearchFilters, SearchPage, Skill } from './types';
import type { FetchLike } from './types';

export interface RegistryApiOptions {
  apiUrl: string;
  apiKey: string | undefined;
  fetch: FetchLike;
  timeoutMs: number;
  retries: number;
}

const MAX_CURSOR_LENGTH = 512;

export class RegistryApi {
  private readonly base: string;

  constructor(private readonly options: RegistryApiOptions) {
    this.base = options.apiUrl.replace(/\/+$/, '');
  }

  /** `GET /skills?q=&…` → one page and the next cursor (`X-Next-Cursor`). */
  async search(query: string, filters: SearchFilters = {}): Promise<SearchPage> {
    const params = new URLSearchParams({ q: query });
    for (const [key, value] of Object.entries(filters)) {
      if (value !== undefined && value !== null) params.set(key, String(value));
    }
    const answer = await this.send('GET', `/skills?${params}`, { what: 'search' });
    const json = this.json(answer, 'skill list');
    const cursor = answer.headers.get('x-next-cursor') ?? undefined;
    if (cursor !== undefined && (cursor === '' || cursor.length > MAX_CURSOR_LENGTH)) {
      throw new MarketError('invalid_response', 'The registry answered an invalid X-Next-Cursor header', { status: answer.status });
    }
    return { skills: parseSkills(json, answer.status, answer.text), nextCursor: cursor };
  }

  /** `GET /skills/:slug`. */
  async skill(slug: string, signal?: AbortSignal): Promise<Skill> {
    const answer = await this.send('GET', `/skills/${encodeURIComponent(slug)}`, { what: `skill ${slug}`, slug, signal });
    const skill = parseSkill(this.json(answer, 'skill'), answer.status, answer.text);
    if (skill.slug !== slug) {
      throw new MarketError('invalid_response', `The registry answered skill ${skill.slug} for ${slug}`, { status: answer.status, slug });
    }
    return skill;
  }

  /** `GET /groups[?creator=]`. */
  async groups(creator?: string): Promise<Group[]> {
    const query = creator === undefined ? '' : `?${new URLSearchParams({ creator })}`;
    const answer = await this.send('GET', `/groups${query}`, { what: 'groups' });
    return parseGroups(this.json(answer, 'group list'), answer.status, answer.text);
  }

  /** `POST /analytics/favorite {skillId, action}` (consumer credentials). */
  async favorite(skillId: string, add: boolean, slug: string): Promise<{ favorited: boolean; favoriteCount: number }> {
    const answer = await this.send('POST', '/analytics/favorite', {
      what: 'favorite',
      slug,
      auth: true,
      body: { skillId, action: add ? 'add' : 'remove' },
    });
    return parseFavorite(this.json(answer, 'favorite result'), answer.status, answer.text);
  }

  /** `POST /analytics/usage {skillId, amount (micro-USDC), paymentRef}` (consumer credentials). */
  async usage(record: { skillId: string; amount: number; paymentRef: string }, slug: string): Promise<void> {
    await this.send('POST', '/analytics/usage', { what: 'usage record', slug, auth: true, body: record });
  }

  private async send(
    method: 'GET' | 'POST',
    path: string,
    options: { what: string; slug?: string; auth?: boolean; body?: unknown; signal?: AbortSignal | undefined },
  ): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.auth) {
      if (!this.options.apiKey)
        throw new MarketError('credentials_required', `${options.what} needs apiKey (a consumer key ck_… or a session token)`, {
          slug: options.slug,
        });
      headers.authorization = `Bearer ${this.options.apiKey}`;
    }
    const init: RequestInit = { method, headers, redirect: 'follow' };
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(options.body);
    }
    const answer = await exchange(`${this.base}${path}`, init, {
      fetch: this.options.fetch,
      timeoutMs: this.options.timeoutMs,
      // Writes are not retried blindly: a lost answer may mean it was applied.
      retries: method === 'GET' ? this.options.retries : 0,
      signal: options.signal,
      what: `registry at ${this.base} (${options.what})`,
    });
    if (answer.status >= 200 && answer.status < 300) return answer;
    throw registryError(answer, options.what, options.slug);
  }

  private json(answer: Answer, what: string): unknown {
    const parsed = parseJson(answer.text);
    if (!parsed.ok)
      throw new MarketError('invalid_response', `The registry answered an invalid ${what}: not JSON`, {
        status: answer.status,
        body: answer.text,
      });
    return parsed.value;
  }
}

function registryError(answer: Answer, what: string, slug: string | undefined): RegistryError {
  const parsed = parseJson(answer.text);
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : {};
  const text =
    typeof body.error === 'string' ? body.error.slice(0, 200) : typeof body.message === 'string' ? body.message.slice(0, 200) : undefined;
  const registryCode = typeof body.code === 'string' ? body.code.slice(0, 64) : undefined;
  const requestId = typeof body.requestId === 'string' ? body.requestId.slice(0, 128) : (answer.headers.get('x-request-id') ?? undefined);
  const notFound = answer.status === 404 && slug !== undefined && what.startsWith('skill');
  const message = notFound ? `No skill ${slug} in the registry` : `Registry ${what} failed with ${answer.status}${text ? `: ${text}` : ''}`;
  return new RegistryError(notFound ? 'skill_not_found' : 'registry_error', message, {
    status: answer.status,
    body: answer.text,
    ...(slug === undefined ? {} : { slug }),
    ...(registryCode === undefined ? {} : { registryCode }),
    ...(requestId === undefined ? {} : { requestId }),
  });
}
