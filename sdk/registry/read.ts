/**
 * Reading a registry's answers: each is checked against its schema in the contract (TypeBox's
 * value checker: no code generation, so it runs under a page's content security policy too), and
 * a skill listing also by meaning: its price equal to its atomic price, an absolute http(s)
 * endpoint, a payment network and address that parse. Unknown extra fields pass through.
 */
import { FormatRegistry, type Static, type TSchema, Type as T } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { getAddress } from 'viem';
import { MarketError } from '../http/errors';
import type { JsonSchema } from '../json-schema/index';
import { type Address, type Caip2Network, normalizeNetwork, parsePrice } from '../x402/index';
import { SkillView } from './contract/skills';

const FORMATS: Record<string, (value: string) => boolean> = {
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
  'date-time': (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(v) && !Number.isNaN(Date.parse(v)),
  uri: (v) => URL.canParse(v),
};

/** The formats the contract uses, for checkers outside the registry (which has its own). */
function ensureFormats(): void {
  for (const [name, check] of Object.entries(FORMATS)) if (!FormatRegistry.Has(name)) FormatRegistry.Set(name, check);
}

/** Where an answer came from, for error messages. */
export interface AnswerContext {
  what: string;
  status: number;
  body: string;
  slug?: string | undefined;
}

function invalid(context: AnswerContext, why: string): MarketError {
  return new MarketError('invalid_response', `The registry answered an invalid ${context.what}: ${why}`, {
    status: context.status,
    body: context.body,
    ...(context.slug === undefined ? {} : { slug: context.slug }),
  });
}

/**
 * `value` as `schema` describes it, or MarketError('invalid_response') naming the first bad field.
 *
 * @example
 * const answer = await fetch('https://registry.example/groups');
 * const text = await answer.text();
 * const groups = readAnswer(Type.Array(GroupView), JSON.parse(text), { what: 'group list', status: answer.status, body: text });
 */
export function readAnswer<S extends TSchema>(schema: S, value: unknown, context: AnswerContext): Static<S> {
  ensureFormats();
  if (Value.Check(schema, value)) return value as Static<S>;
  const first = Value.Errors(schema, value).First();
  throw invalid(context, `${first?.path || '/'} ${first?.message ?? 'is invalid'}`);
}

/** A listing with `required` fields and any others of SkillView (an older or another registry may lack some). */
const listingWith = <K extends keyof Static<typeof SkillView>>(required: readonly K[]) =>
  T.Composite([T.Pick(SkillView, required), T.Partial(T.Omit(SkillView, required))]);

/** What a client needs of a listing to call the skill. */
export const ListedSkillSchema = listingWith([
  'id',
  'slug',
  'name',
  'price',
  'priceAtomic',
  'network',
  'endpoint',
  'paymentAddress',
  'isActive',
]);

/**
 * A registration's answer as registries of this kind send it: `{slug}` is enough, with the skill's
 * `id` when known (any registry's id, used for call records) and the rest of the listing optional.
 */
export const RegisteredSkillSchema = T.Composite([
  T.Pick(SkillView, ['slug']),
  T.Object({ id: T.Optional(T.String({ minLength: 1, maxLength: 100 })) }),
  T.Partial(T.Omit(SkillView, ['slug', 'id'])),
]);
/** A registration's answer (see {@link RegisteredSkillSchema}): `slug` always, `id` and the rest of the listing when the registry sends them. */
export type RegisteredSkill = Static<typeof RegisteredSkillSchema>;

type Listed = Static<typeof ListedSkillSchema>;

/** A skill as a client reads it: checked, with its network normalized and its addresses checksummed. */
export type Skill = Omit<Listed, 'network' | 'paymentAddress' | 'description' | 'inputSchema' | 'outputSchema' | 'groups'> & {
  /** CAIP-2 payment network, e.g. `eip155:8453`. */
  network: Caip2Network;
  /** Who receives payments (the 402 `payTo` must be this address). */
  paymentAddress: Address;
  description: string | null;
  inputSchema: JsonSchema | null;
  outputSchema: JsonSchema | null;
  groups: string[];
};

/** The skill in `value`, or why it is not one. */
function listedSkill(value: unknown): Skill | string {
  ensureFormats();
  if (!Value.Check(ListedSkillSchema, value)) {
    const first = Value.Errors(ListedSkillSchema, value).First();
    return `${first?.path || '/'} ${first?.message ?? 'is invalid'}`;
  }
  const raw = value as Listed;
  let listed: bigint;
  try {
    listed = parsePrice(raw.price);
  } catch {
    return `/price ${JSON.stringify(raw.price.slice(0, 32))} is not a price`;
  }
  if (listed !== BigInt(raw.priceAtomic)) return `/price ${raw.price} disagrees with /priceAtomic ${raw.priceAtomic}`;
  if (!URL.canParse(raw.endpoint)) return '/endpoint is not an absolute URL';
  const protocol = new URL(raw.endpoint).protocol;
  if (protocol !== 'https:' && protocol !== 'http:') return '/endpoint is not an http(s) URL';
  let network: Caip2Network;
  try {
    network = normalizeNetwork(raw.network);
  } catch {
    return `/network ${JSON.stringify(raw.network.slice(0, 32))} is not a CAIP-2 network`;
  }
  return {
    ...raw,
    description: raw.description ?? null,
    network,
    paymentAddress: getAddress(raw.paymentAddress.toLowerCase()),
    inputSchema: raw.inputSchema ?? null,
    outputSchema: raw.outputSchema ?? null,
    groups: raw.groups ?? [],
  };
}

/**
 * A registry skill, checked by shape and by meaning.
 *
 * @throws MarketError('invalid_response') naming the first bad field
 * @example
 * const answer = await fetch('https://registry.example/skills/weather-now');
 * const text = await answer.text();
 * const skill = readSkill(JSON.parse(text), { what: 'skill', status: answer.status, body: text, slug: 'weather-now' });
 * skill.network; // CAIP-2, e.g. 'eip155:8453'; skill.paymentAddress checksummed
 */
export function readSkill(value: unknown, context: AnswerContext): Skill {
  const skill = listedSkill(value);
  if (typeof skill === 'string') throw invalid(context, skill);
  return skill;
}

/**
 * A JSON array of skills, each checked as by {@link readSkill}.
 *
 * @example
 * const answer = await fetch('https://registry.example/creators/me/skills', { headers: { authorization: `Bearer ${apiKey}` } });
 * const text = await answer.text();
 * const skills = readSkills(JSON.parse(text), { what: 'skill list', status: answer.status, body: text });
 */
export function readSkills(value: unknown, context: AnswerContext): Skill[] {
  if (!Array.isArray(value)) throw invalid(context, 'expected a JSON array');
  return value.map((item, index) => {
    const skill = listedSkill(item);
    if (typeof skill === 'string') throw invalid(context, `item ${index}: ${skill}`);
    return skill;
  });
}
