/**
 * `skill(options, handler)`: one paid skill, checked when it is defined so that a bad price or
 * schema fails at start-up instead of at the first paid call.
 */
import { schemaProblem, type JsonSchema } from '../json-schema/index';
import { formatPriceUsd, isX402Error, parsePrice, type Address } from '../x402/index';
import { SkillDefinitionError } from './errors';
import { PERIODS, type Period } from './plans/period';

/** Marks the objects `skill()` returns; `Symbol.for` so that two copies of the SDK recognise each other's skills. */
const SKILL_BRAND: unique symbol = Symbol.for('skill-market.skill') as never;

/**
 * Default handler timeout: 30 s.
 *
 * @example
 * skill({ price: '$0.001' }, handler).timeout; // DEFAULT_SKILL_TIMEOUT_MS (30 000) when none is given
 */
export const DEFAULT_SKILL_TIMEOUT_MS = 30_000;
/**
 * Longest handler timeout: 200 s. The payment authorization must still be valid when it is
 * settled, and a connection may stay silent at most 255 s on Bun.
 *
 * @example
 * skill({ price: '$0.01', timeout: MAX_SKILL_TIMEOUT_MS }, render); // the longest a handler may run: 200 s
 */
export const MAX_SKILL_TIMEOUT_MS = 200_000;

/** CDP's facilitator refuses a `resource.description` over 500 characters: a longer one would never be indexed where it crawls. */
const MAX_DESCRIPTION = 500;
const MAX_GROUPS = 20;
const MAX_GROUP_LENGTH = 60;
const OPTION_KEYS = new Set([
  'price',
  'description',
  'inputSchema',
  'outputSchema',
  'groups',
  'timeout',
  'channels',
  'upto',
  'trial',
  'tiers',
  'tierPeriod',
  'exact',
]);
/** Most volume price steps. */
const MAX_TIERS = 10;
/** Most free trial calls per wallet and period. */
const MAX_TRIAL_CALLS = 1000;

/** What one paid skill is: its price and how it describes itself to the registry. */
export interface SkillOptions {
  /** Price per call in USDC, a dollar-prefixed decimal, e.g. `"$0.001"`. Required; at most 6 decimals. */
  price: string;
  /** What the skill does; shown in the registry and in the 402 terms. At most 500 characters (CDP's facilitator's limit). */
  description?: string;
  /** JSON Schema of the input; a call whose input does not match is answered 400 before any payment. */
  inputSchema?: JsonSchema;
  /** JSON Schema of the result; a result that does not match is answered 500 and not charged. */
  outputSchema?: JsonSchema;
  /** Registry groups of this skill (merged with `register.groups`); they must exist in your account. */
  groups?: string[];
  /** Milliseconds the handler may run; past it the call is answered 504 and not charged. Default 30 000, at most 200 000. */
  timeout?: number;
  /**
   * Offer payment channels (x402 `batch-settlement`) for this skill, or not, whatever its price.
   * Default: the server's choice (`serve({ channels })`: skills priced below $0.01).
   */
  channels?: boolean;
  /**
   * Usage-based price: `price` becomes the most a call costs, and the x402 `upto` scheme is offered
   * beside `exact`. The payer signs the price as a maximum (a Permit2 authorization, after a one-time
   * approval of Permit2 on the token) and is charged what the handler says with `context.charge`,
   * the full price when it says nothing, once the result is good. An `exact` payment still pays the
   * full price. Default false.
   * @example skill({ price: '$0.01', upto: true }, (input, { charge }) => { const r = work(input); charge(r.cost); return r.body; })
   */
  upto?: boolean;
  /**
   * Sell by `exact` as well, a payment of the full price up front. Default true. With `false` the
   * skill is sold only where the call pays what it used: `upto` (with `upto: true`) and payment
   * channels (with `channels: true`); a payer whose client offers only `exact` gets the 402 without
   * an `exact` offer and pays nothing. Needs `upto: true` or `channels: true`.
   * @example skill({ price: '$0.05', upto: true, exact: false }, (input, { charge }) => { const r = work(input); charge(r.cost); return r.body; })
   */
  exact?: boolean;
  /**
   * A free trial: `calls` free calls per payer wallet per `period` (`'day'`, `'week'` or `'month'`,
   * UTC). The 402 offers the x402 `sign-in-with-x` extension; a payer who signs it with its wallet
   * (no gas, no payment) gets the call free while it has calls left, then pays as usual. Shown on
   * the skill's listing. Default none.
   * @example skill({ price: '$0.01', trial: { calls: 3, period: 'day' } }, handler)
   */
  trial?: Trial;
  /**
   * Volume prices: after a payer's `after` paid calls in the `tierPeriod`, each call costs `price`
   * (steps by growing `after`, each price lower than the one before). Charged exactly on payment
   * channels and `upto` (the server counts each payer's calls); an `exact` payment pays what the
   * 402 asked: the payer's tier price when the payer signed the 402's sign-in, else the base price.
   * Shown on the listing. Default none.
   * @example skill({ price: '$0.001', tiers: [{ after: 1000, price: '$0.0008' }], tierPeriod: 'month' }, handler)
   */
  tiers?: TierStep[];
  /** The period volume prices count paid calls in: `'day'`, `'week'` or `'month'` (default), UTC. */
  tierPeriod?: Period;
}

/** One volume price: after `after` paid calls of a payer in the period, `price`. */
export interface TierStep {
  after: number;
  price: string;
}

/** A skill's free trial: calls per payer wallet per period. */
export interface Trial {
  /** Free calls per wallet in a period, 1 to 1000. */
  calls: number;
  /** The counting period, UTC. */
  period: Period;
}

/** What a handler learns about the call besides its input. */
export interface SkillContext {
  /** The skill's name (its path segment). */
  skill: string;
  /** The address that paid for this call. */
  payer: Address;
  /** Aborted when the timeout passes: stop working and let the call end. */
  signal: AbortSignal;
  /** The incoming request (its headers, for instance). */
  request: Request;
  /**
   * Charges this call less than the skill's price: `'$0.0004'` or atomic units. Applies to calls
   * paid over a payment channel (the voucher allows up to the price; the payer is charged this and
   * told so in `PAYMENT-RESPONSE` `extra.chargedAmount`) and to `upto` payments (the settlement
   * moves this, `PAYMENT-RESPONSE` `amount`); an `exact` payment is the full price whatever is reported. Above the price (or below 0) it throws, and the call fails uncharged.
   * @example skill({ price: '$0.01' }, (input, { charge }) => { const r = work(input); charge(`$${r.cost}`); return r; })
   */
  charge(amount: string | bigint): void;
}

/** The skill's work: input in, a JSON-serializable result out (or a promise of it). */
// biome-ignore lint/suspicious/noExplicitAny: by default a handler takes and returns whatever its author declares
export type SkillHandler<I = any, O = any> = (input: I, context: SkillContext) => O | Promise<O>;

/** A checked, frozen skill definition, as `skill()` returns it. */
// biome-ignore lint/suspicious/noExplicitAny: the handler's own input and output types, whatever its author declares
export interface Skill<I = any, O = any> {
  readonly [SKILL_BRAND]: true;
  /** The price as given, normalized: `"$0.001"`. */
  readonly price: string;
  readonly description?: string;
  readonly inputSchema?: JsonSchema;
  readonly outputSchema?: JsonSchema;
  /** Trimmed, de-duplicated; may be empty when `register.groups` supplies them. */
  readonly groups: readonly string[];
  /** Handler timeout in milliseconds. */
  readonly timeout: number;
  /** Whether it offers payment channels; absent: the server decides by price. */
  readonly channels?: boolean;
  /** Whether its price is a maximum, charged by use through the x402 `upto` scheme. */
  readonly upto?: boolean;
  /** Its free trial, when it has one. */
  readonly trial?: Readonly<Trial>;
  /** Its volume prices (prices normalized, `"$0.0008"`), when it has them. */
  readonly tiers?: { readonly period: Period; readonly steps: readonly Readonly<TierStep>[] };
  /** False when the skill is not sold by `exact` (the full price up front). */
  readonly exact?: false;
  readonly handler: SkillHandler<I, O>;
}

/** A skill server's skills, by name; each name becomes `POST /<name>`. */
export type Skills = Record<string, Skill>;

/**
 * Defines a paid skill. Everything is validated now: the price (via the x402 price parser),
 * both schemas, the groups and the timeout; a mistake throws a {@link SkillDefinitionError}
 * naming the option.
 *
 * @example
 * export const translate = skill(
 *   {
 *     price: '$0.002',
 *     description: 'Translates text to French',
 *     inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
 *     groups: ['language'],
 *     timeout: 10_000, // default 30 000 ms
 *   },
 *   async ({ text }, { signal }) => ({ french: await translateToFrench(text, signal) }),
 * );
 */
// biome-ignore lint/suspicious/noExplicitAny: see SkillHandler
export function skill<I = any, O = any>(options: SkillOptions, handler: SkillHandler<I, O>): Skill<I, O> {
  const fail = (message: string): never => {
    throw new SkillDefinitionError(`skill(): ${message}`);
  };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) fail('options must be an object with at least a price');
  if (typeof handler !== 'function') fail('the second argument must be the handler function');
  for (const key of Object.keys(options)) if (!OPTION_KEYS.has(key)) fail(`unknown option "${key}"`);

  if (typeof options.price !== 'string') fail('price must be a dollar-prefixed decimal string such as "$0.001"');
  let atomic = 0n;
  try {
    atomic = parsePrice(options.price);
  } catch (error) {
    fail(isX402Error(error) ? `price: ${error.message}` : `price ${JSON.stringify(options.price)} is invalid`);
  }
  const description = options.description;
  if (description !== undefined && (typeof description !== 'string' || description.length > MAX_DESCRIPTION)) {
    fail(
      `description must be a string of at most ${MAX_DESCRIPTION} characters (CDP's facilitator refuses a longer resource.description, so the Bazaar would never index the skill)`,
    );
  }
  for (const field of ['inputSchema', 'outputSchema'] as const) {
    const schema = options[field];
    if (schema === undefined) continue;
    const problem = schemaProblem(schema);
    if (problem !== undefined) fail(`${field} is not a usable JSON Schema: ${problem}`);
  }
  const timeout = options.timeout ?? DEFAULT_SKILL_TIMEOUT_MS;
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > MAX_SKILL_TIMEOUT_MS) {
    fail(`timeout must be a whole number of milliseconds between 1 and ${MAX_SKILL_TIMEOUT_MS}`);
  }
  const groups = normalizeGroups(options.groups, fail);
  if (options.channels !== undefined && typeof options.channels !== 'boolean') fail('channels must be true or false');
  if (options.upto !== undefined && typeof options.upto !== 'boolean') fail('upto must be true or false');
  const trial = options.trial;
  checkTrial(trial, fail);
  const tiers = tiersOf(options, atomic, fail);
  if (options.exact !== undefined && typeof options.exact !== 'boolean') fail('exact must be true or false');
  if (options.exact === false && options.upto !== true && options.channels !== true) {
    fail('exact: false needs upto: true or channels: true, or nothing would pay for the skill');
  }

  const definition: Skill<I, O> = {
    [SKILL_BRAND]: true,
    price: formatPriceUsd(atomic),
    ...(description !== undefined ? { description } : {}),
    ...(options.inputSchema !== undefined ? { inputSchema: options.inputSchema } : {}),
    ...(options.outputSchema !== undefined ? { outputSchema: options.outputSchema } : {}),
    groups: Object.freeze(groups),
    timeout,
    ...(options.channels !== undefined ? { channels: options.channels } : {}),
    ...(options.upto ? { upto: true } : {}),
    ...(trial ? { trial: Object.freeze({ calls: trial.calls, period: trial.period }) } : {}),
    ...(tiers ? { tiers } : {}),
    ...(options.exact === false ? { exact: false as const } : {}),
    handler,
  };
  return Object.freeze(definition);
}

/**
 * `definition` with another free trial and volume prices (its listing's), checked as `skill()`
 * checks them (each step below `price`, micro-USDC: default the skill's); undefined removes one. Throws a {@link SkillDefinitionError} naming the field.
 *
 * @example
 * const edited = withPlans(echo, { trial: { calls: 5, period: 'day' } }); // what serve() does when the listing's trial changes
 */
export function withPlans(
  definition: Skill,
  plans: { trial?: Trial | undefined; tiers?: { period: Period; steps: readonly TierStep[] } | undefined },
  price: bigint = parsePrice(definition.price),
): Skill {
  const fail = (message: string): never => {
    throw new SkillDefinitionError(message);
  };
  checkTrial(plans.trial, fail);
  const tiers = plans.tiers
    ? tiersOf({ price: definition.price, tiers: [...plans.tiers.steps], tierPeriod: plans.tiers.period }, price, fail)
    : undefined;
  const { trial: _trial, tiers: _tiers, ...rest } = definition;
  return Object.freeze({
    ...rest,
    ...(plans.trial ? { trial: Object.freeze({ calls: plans.trial.calls, period: plans.trial.period }) } : {}),
    ...(tiers ? { tiers } : {}),
  });
}

function checkTrial(trial: Trial | undefined, fail: (message: string) => never): void {
  if (trial === undefined) return;
  if (typeof trial !== 'object' || trial === null) fail("trial must be { calls, period: 'day' | 'week' | 'month' }");
  if (!Number.isInteger(trial.calls) || trial.calls < 1 || trial.calls > MAX_TRIAL_CALLS)
    fail(`trial.calls must be a whole number from 1 to ${MAX_TRIAL_CALLS}`);
  if (!PERIODS.includes(trial.period)) fail(`trial.period must be one of ${PERIODS.join(', ')}`);
}

/** The volume prices of `options`, checked: growing `after`, falling prices below the skill's. */
function tiersOf(options: SkillOptions, price: bigint, fail: (message: string) => never): Skill['tiers'] {
  if (options.tiers === undefined) {
    if (options.tierPeriod !== undefined) fail('tierPeriod needs tiers');
    return undefined;
  }
  const period = options.tierPeriod ?? 'month';
  if (!PERIODS.includes(period)) fail(`tierPeriod must be one of ${PERIODS.join(', ')}`);
  if (!Array.isArray(options.tiers) || options.tiers.length === 0 || options.tiers.length > MAX_TIERS)
    fail(`tiers must be a list of 1 to ${MAX_TIERS} { after, price } steps`);
  let after = 0;
  let last = price;
  const steps = options.tiers.map((step, i) => {
    if (typeof step !== 'object' || step === null) fail(`tiers[${i}] must be { after, price }`);
    if (!Number.isSafeInteger(step.after) || step.after <= after) fail(`tiers[${i}].after must be a whole number above the step before's`);
    let amount = 0n;
    try {
      amount = parsePrice(step.price);
    } catch (error) {
      fail(`tiers[${i}].price: ${isX402Error(error) ? error.message : 'invalid'}`);
    }
    if (amount >= last) fail(`tiers[${i}].price must be lower than the price before it`);
    after = step.after;
    last = amount;
    return Object.freeze({ after: step.after, price: formatPriceUsd(amount) });
  });
  return Object.freeze({ period, steps: Object.freeze(steps) });
}

/**
 * True for an object made by `skill()` (from any copy of this SDK).
 *
 * @example
 * import { pathToFileURL } from 'node:url';
 * import { isSkill, serve, type Skills } from 'skill-market/creator';
 *
 * const module = await import(pathToFileURL('skills.ts').href); // a module of skills, as `market serve` loads it
 * const skills = Object.fromEntries(Object.entries(module).filter(([, value]) => isSkill(value))) as Skills;
 * await serve(skills);
 */
export function isSkill(value: unknown): value is Skill {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[SKILL_BRAND] === true;
}

/**
 * Group names trimmed, empty ones refused, duplicates dropped (first spelling kept).
 * `fail` decides which error a bad list becomes.
 */
export function normalizeGroups(groups: unknown, fail: (message: string) => never): string[] {
  if (groups === undefined) return [];
  if (!Array.isArray(groups)) fail('groups must be an array of group names');
  const out: string[] = [];
  for (const group of groups as unknown[]) {
    if (typeof group !== 'string') fail('groups must contain only strings');
    const name = (group as string).trim();
    if (name === '' || name.length > MAX_GROUP_LENGTH) fail(`each group name must have 1 to ${MAX_GROUP_LENGTH} characters`);
    if (!out.includes(name)) out.push(name);
  }
  if (out.length > MAX_GROUPS) fail(`at most ${MAX_GROUPS} groups`);
  return out;
}
