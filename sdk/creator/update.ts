/**
 * `updateSkill(slug, data, { apiKey })`: a partial update of a registered skill (`PATCH /skills/:slug`).
 * Values are checked here first, so a bad price or schema never reaches the registry.
 */
import { schemaProblem } from '../json-schema/index';
import { formatPriceUsd, isX402Error, parsePrice } from '../x402/index';
import { errorText } from './logger';
import { DEFAULT_API_URL, RegistryClient, type RetryOptions } from '../registry/client';
import { httpUrl } from './settings';
import { normalizeGroups } from './skill';
import type { TrialTerms, VolumeTiers } from '../registry/contract/skills';

/** Fields `updateSkill` may change. */
export interface SkillUpdate {
  description?: string;
  /** Dollar-prefixed decimal, e.g. `"$0.002"`. */
  price?: string;
  /** Replaces all groups of the skill; at least one. */
  groups?: string[];
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  isActive?: boolean;
  /** The free trial (`{ calls, period }`), or null to remove it; kept over the module's on re-registration. */
  trial?: TrialTerms | null;
  /** The volume prices (`{ period, steps: [{ after, price }] }`), or null to remove them; kept over the module's on re-registration. */
  tiers?: VolumeTiers | null;
  /** The price is the most a call costs (listed "up to"); a registration sending `upto` replaces it. */
  usageBased?: boolean;
}

/** Options of {@link updateSkill}. */
export interface UpdateOptions {
  apiKey: string;
  /** Default `http://localhost:3000`. */
  apiUrl?: string;
  fetch?: typeof fetch;
  retry?: RetryOptions;
}

const UPDATE_KEYS = new Set(['description', 'price', 'groups', 'inputSchema', 'outputSchema', 'isActive', 'trial', 'tiers', 'usageBased']);

/**
 * Updates a registered skill. `groups` replaces all of its groups. Values are checked before
 * anything is sent; never throws.
 *
 * @example
 * const { success, error } = await updateSkill('echo', { price: '$0.002', isActive: true }, { apiKey });
 * await updateSkill('echo', { trial: { calls: 3, period: 'day' }, tiers: null }, { apiKey }); // a running serve() follows within seconds
 */
export async function updateSkill(slug: string, data: SkillUpdate, options: UpdateOptions): Promise<{ success: boolean; error?: string }> {
  const body = checkUpdate(slug, data, options);
  if (typeof body === 'string') return { success: false, error: body };
  try {
    const client = new RegistryClient({
      apiUrl: httpUrl(options.apiUrl ?? DEFAULT_API_URL, 'apiUrl'),
      apiKey: options.apiKey,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.retry ? { retry: options.retry } : {}),
    });
    await client.updateSkill(slug, body);
    return { success: true };
  } catch (error) {
    return { success: false, error: errorText(error) };
  }
}

function checkUpdate(slug: string, data: SkillUpdate, options: UpdateOptions): Record<string, unknown> | string {
  if (typeof slug !== 'string' || slug.trim() === '') return 'slug is required';
  if (!options || typeof options.apiKey !== 'string' || options.apiKey.trim() === '') return 'no API key: pass apiKey';
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return 'data must be an object';
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined) continue;
    if (!UPDATE_KEYS.has(key)) return `unknown field "${key}"`;
    body[key] = value;
  }
  if (Object.keys(body).length === 0) return 'nothing to update';
  if (body.description !== undefined && typeof body.description !== 'string') return 'description must be a string';
  if (body.isActive !== undefined && typeof body.isActive !== 'boolean') return 'isActive must be true or false';
  if (body.usageBased !== undefined && typeof body.usageBased !== 'boolean') return 'usageBased must be true or false';
  if (body.price !== undefined) {
    if (typeof body.price !== 'string') return 'price must be a dollar-prefixed decimal string such as "$0.001"';
    try {
      body.price = formatPriceUsd(parsePrice(body.price));
    } catch (error) {
      return isX402Error(error) ? `price: ${error.message}` : 'price is invalid';
    }
  }
  for (const field of ['inputSchema', 'outputSchema'] as const) {
    const problem = body[field] === undefined ? undefined : schemaProblem(body[field]);
    if (problem) return `${field} is not a usable JSON Schema: ${problem}`;
  }
  if (body.groups !== undefined) {
    try {
      body.groups = normalizeGroups(body.groups, (message) => {
        throw new TypeError(message);
      });
    } catch (error) {
      return `groups: ${errorText(error)}`;
    }
    if ((body.groups as string[]).length === 0) return 'groups may not be empty (they replace all groups of the skill)';
  }
  return body;
}
