/**
 * Registering skills with the registry: one upsert per skill (`POST /skills`), at most
 * `batch.concurrency` in flight. Returns one `{ name, success, slug?, error? }` per skill; never throws.
 */
import type { ListingPlans } from './listing-price';
import { endpointProblem, type RegisterSkill } from '../registry/contract/index';
import { DEFAULT_API_URL, RegistryClient, type RetryOptions } from '../registry/client';
import { DEFAULT_NETWORK } from '../x402/index';
import { httpUrl, walletAddress } from './settings';
import { isSkill, normalizeGroups, type Skill, type Skills } from './skill';
import { errorText } from './logger';

export { DEFAULT_API_URL };
/**
 * Default number of registrations in flight at once.
 *
 * @example
 * await register(skills, { apiKey, paymentAddress, endpoint, batch: { concurrency: 2 * DEFAULT_REGISTRATION_CONCURRENCY } });
 */
export const DEFAULT_REGISTRATION_CONCURRENCY = 5;

/** Outcome of registering one skill. */
export interface RegistrationResult {
  name: string;
  success: boolean;
  /** Present on success: the registry's slug of the skill. */
  slug?: string;
  /** Present on success when the registry tells it: the skill id (used for call tracking). */
  skillId?: string;
  /**
   * Present on success when the registry tells it: the listing's price, e.g. `"$0.005"`. It differs
   * from the skill's own when the owner edited the price (dashboard, `updateSkill`): the edit is kept.
   */
  price?: string;
  /** Present on success when the registry tells it: the listing's free trial (null: none); an owner's edit is kept. */
  trial?: ListingPlans['trial'];
  /** Present on success when the registry tells it: the listing's volume prices (null: none); an owner's edit is kept. */
  tiers?: ListingPlans['tiers'];
  /** Present on failure: why. */
  error?: string;
}

/** Options of the manual {@link register} call. */
export interface RegisterOptions {
  /** Creator API key (`sk_…`). */
  apiKey: string;
  /** Address that receives the payments. */
  paymentAddress: string;
  /** Address of the key the skill server signs its receipts with (listed as `receiptSigner`); default none. */
  receiptSigner?: string;
  /** Public base URL of the skill server; each skill is called at `{endpoint}/<name>`. */
  endpoint: string;
  /** Registry URL; default `http://localhost:3000`. */
  apiUrl?: string;
  /** Groups given to every skill, merged with each skill's own (union). */
  groups?: string[];
  /** `concurrency`: registrations in flight at once, default 5. */
  batch?: { concurrency?: number };
  /** CAIP-2 payment network recorded with the skills; default `eip155:8453`. */
  network?: string;
  fetch?: typeof fetch;
  retry?: RetryOptions;
  userAgent?: string;
}

/**
 * Registers (or updates, by name) every skill with the registry, at most `batch.concurrency` at
 * once. Each skill ends up with the union of `groups` and its own groups (trimmed, de-duplicated)
 * and must have at least one. Never throws.
 *
 * @example
 * const results = await register({ echo }, { apiKey: process.env.MARKET_API_KEY!, paymentAddress: '0x…', endpoint: 'https://skills.example.com', groups: ['tools'] });
 * for (const r of results) console.log(r.name, r.success ? r.slug : r.error);
 */
export async function register(skills: Skills, options: RegisterOptions): Promise<RegistrationResult[]> {
  const entries = Object.entries(skills ?? {});
  const setup = checkRegisterOptions(options);
  if (typeof setup === 'string') return entries.map(([name]) => ({ name, success: false, error: setup }));
  const client = new RegistryClient({
    apiUrl: setup.apiUrl,
    apiKey: options.apiKey,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.userAgent ? { userAgent: options.userAgent } : {}),
  });
  return mapWithConcurrency(entries, setup.concurrency, async ([name, definition]): Promise<RegistrationResult> => {
    if (!isSkill(definition)) return { name, success: false, error: 'not a skill: define it with skill(options, handler)' };
    const groups = mergeGroups(setup.groups, definition.groups);
    if (groups.length === 0)
      return { name, success: false, error: 'no groups: give the skill groups or pass register groups (at least one is required)' };
    try {
      const { skill } = await client.registerSkill(registrationBody(name, definition, groups, setup));
      return {
        name,
        success: true,
        slug: skill.slug,
        ...(skill.id ? { skillId: skill.id } : {}),
        ...(skill.price ? { price: skill.price } : {}),
        ...(skill.trial !== undefined ? { trial: skill.trial } : {}),
        ...(skill.tiers !== undefined ? { tiers: skill.tiers } : {}),
      };
    } catch (error) {
      return { name, success: false, error: errorText(error) };
    }
  });
}

/**
 * Union of group lists, trimmed, empty names dropped, first spelling kept.
 *
 * @example
 * mergeGroups(['text', ' nlp '], undefined, ['nlp', 'Text']); // ['text', 'nlp', 'Text']
 */
export function mergeGroups(...lists: readonly (readonly string[] | undefined)[]): string[] {
  const out: string[] = [];
  for (const list of lists)
    for (const group of list ?? []) {
      const name = typeof group === 'string' ? group.trim() : '';
      if (name !== '' && !out.includes(name)) out.push(name);
    }
  return out;
}

interface RegisterSetup {
  apiUrl: string;
  endpoint: string;
  paymentAddress: string;
  receiptSigner: string | undefined;
  network: string;
  groups: string[];
  concurrency: number;
}

function checkRegisterOptions(options: RegisterOptions): RegisterSetup | string {
  try {
    if (!options || typeof options.apiKey !== 'string' || options.apiKey.trim() === '')
      return 'no API key: pass apiKey or set MARKET_API_KEY';
    const concurrency = options.batch?.concurrency ?? DEFAULT_REGISTRATION_CONCURRENCY;
    if (!Number.isInteger(concurrency) || concurrency < 1) return 'batch.concurrency must be a positive integer';
    const endpoint = httpUrl(options.endpoint, 'endpoint');
    // The registry's own rule: refused here, before any request, in the registry's words.
    const problem = endpointProblem(endpoint);
    if (problem) return `endpoint ${problem}`;
    return {
      apiUrl: httpUrl(options.apiUrl ?? DEFAULT_API_URL, 'apiUrl'),
      endpoint,
      paymentAddress: walletAddress(String(options.paymentAddress ?? ''), 'paymentAddress'),
      receiptSigner: options.receiptSigner === undefined ? undefined : walletAddress(String(options.receiptSigner), 'receiptSigner'),
      network: options.network ?? DEFAULT_NETWORK,
      // Blank names are dropped here (e.g. from splitting "a,,b"); skill() refuses them outright.
      groups: normalizeGroups(
        Array.isArray(options.groups) ? options.groups.filter((g) => typeof g !== 'string' || g.trim() !== '') : options.groups,
        (message) => {
          throw new TypeError(`register groups: ${message}`);
        },
      ),
      concurrency,
    };
  } catch (error) {
    return errorText(error);
  }
}

function registrationBody(name: string, definition: Skill, groups: string[], setup: RegisterSetup): RegisterSkill {
  return {
    name,
    endpoint: `${setup.endpoint}/${name}`,
    price: definition.price,
    paymentAddress: setup.paymentAddress,
    ...(setup.receiptSigner ? { receiptSigner: setup.receiptSigner } : {}),
    groups,
    network: setup.network,
    ...(definition.description !== undefined ? { description: definition.description } : {}),
    ...(definition.inputSchema !== undefined ? { inputSchema: definition.inputSchema } : {}),
    ...(definition.outputSchema !== undefined ? { outputSchema: definition.outputSchema } : {}),
    // Always sent, so that a skill whose definition drops `upto` is listed at a flat price again.
    usageBased: definition.upto === true,
    ...(definition.trial ? { trial: { calls: definition.trial.calls, period: definition.trial.period } } : {}),
    ...(definition.tiers
      ? { tiers: { period: definition.tiers.period, steps: definition.tiers.steps.map((s) => ({ after: s.after, price: s.price })) } }
      : {}),
  };
}

/** Runs `fn` over `items` with at most `limit` in flight; results keep the input order. */
async function mapWithConcurrency<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
