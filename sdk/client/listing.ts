/**
 * Checks of what the registry answers: a skill or group is accepted only when every field the
 * client relies on is present and sane (payment fields especially); unknown fields pass through.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { getAddress } from 'viem';
import { normalizeNetwork, parsePrice } from '../x402/index';
import { MarketError } from './errors';
import type { Group, Skill } from './types';

const Text = Type.String({ maxLength: 10_000 });
const NullableText = Type.Union([Text, Type.Null()]);
const SchemaObject = Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]);

const SkillShape = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  slug: Type.String({ minLength: 1, maxLength: 200 }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(NullableText),
  price: Type.String({ minLength: 1, maxLength: 64 }),
  priceAtomic: Type.String({ pattern: '^[1-9][0-9]{0,20}$' }),
  network: Type.String({ pattern: '^eip155:[1-9][0-9]{0,15}$' }),
  endpoint: Type.String({ minLength: 1, maxLength: 2048 }),
  paymentAddress: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }),
  inputSchema: Type.Optional(SchemaObject),
  outputSchema: Type.Optional(SchemaObject),
  isActive: Type.Boolean(),
  groups: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 })),
});

const GroupShape = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  slug: Type.String({ minLength: 1, maxLength: 200 }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(NullableText),
});

const FavoriteShape = Type.Object({ favorited: Type.Boolean(), favoriteCount: Type.Integer({ minimum: 0 }) });

const checkers = {
  skill: TypeCompiler.Compile(SkillShape),
  group: TypeCompiler.Compile(GroupShape),
  favorite: TypeCompiler.Compile(FavoriteShape),
};

function invalid(what: string, why: string, status: number, body: string): MarketError {
  return new MarketError('invalid_response', `The registry answered an invalid ${what}: ${why}`, { status, body });
}

function firstProblem(checker: (typeof checkers)[keyof typeof checkers], value: unknown): string {
  const first = checker.Errors(value).First();
  return `${first?.path || '/'} ${first?.message ?? 'is invalid'}`;
}

/** The skill in `value`, or why it is not one. */
function readSkill(value: unknown): Skill | string {
  if (!checkers.skill.Check(value)) return firstProblem(checkers.skill, value);
  const raw = value as Static<typeof SkillShape> & Record<string, unknown>;
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
  return {
    ...raw,
    description: raw.description ?? null,
    network: normalizeNetwork(raw.network),
    paymentAddress: getAddress(raw.paymentAddress.toLowerCase()),
    inputSchema: raw.inputSchema ?? null,
    outputSchema: raw.outputSchema ?? null,
    groups: raw.groups ?? [],
  } as Skill;
}

/**
 * A registry skill, checked: shape, `price` equal to `priceAtomic`, an absolute http(s)
 * `endpoint`, a CAIP-2 `network`; addresses are checksummed.
 *
 * @throws MarketError('invalid_response') naming the first bad field
 */
export function parseSkill(value: unknown, status: number, body: string): Skill {
  const skill = readSkill(value);
  if (typeof skill === 'string') throw invalid('skill', skill, status, body);
  return skill;
}

/** A JSON array of registry skills, each checked as by {@link parseSkill}. */
export function parseSkills(value: unknown, status: number, body: string): Skill[] {
  if (!Array.isArray(value)) throw invalid('skill list', 'expected a JSON array', status, body);
  return value.map((item, index) => {
    const skill = readSkill(item);
    if (typeof skill === 'string') throw invalid('skill list', `item ${index}: ${skill}`, status, body);
    return skill;
  });
}

/** A JSON array of groups. */
export function parseGroups(value: unknown, status: number, body: string): Group[] {
  if (!Array.isArray(value)) throw invalid('group list', 'expected a JSON array', status, body);
  for (const [index, item] of value.entries()) {
    if (!checkers.group.Check(item)) throw invalid('group list', `item ${index}: ${firstProblem(checkers.group, item)}`, status, body);
  }
  return (value as Group[]).map((g) => ({ ...g, description: g.description ?? null }));
}

/** The answer of `POST /analytics/favorite`. */
export function parseFavorite(value: unknown, status: number, body: string): { favorited: boolean; favoriteCount: number } {
  if (!checkers.favorite.Check(value)) throw invalid('favorite result', firstProblem(checkers.favorite, value), status, body);
  const { favorited, favoriteCount } = value as Static<typeof FavoriteShape>;
  return { favorited, favoriteCount };
}
