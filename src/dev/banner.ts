/** The banner `market dev` prints once everything runs: where things are and one paid call to copy. */
import { formatUnits } from 'viem';
import { validateAgainst, type JsonSchema } from 'skill-market/json-schema';
import { displayPath, selfCommand, shellQuote } from './self';
import type { DevStack } from './stack';

export function banner(stack: DevStack, cwd = process.cwd()): string {
  const skill = stack.skills.find((s) => s.name === 'word-count') ?? stack.skills[0];
  const dir = displayPath(stack.paths.root, cwd);
  const call = skill
    ? `${selfCommand(cwd)} call --dev ${shellQuote(dir)} ${skill.slug} ${shellQuote(JSON.stringify(exampleInput(skill.inputSchema)))}`
    : '(the module has no skills)';
  return [
    '',
    'Skill Market is running on this machine (dev mode: test USDC on a local chain, no real money)',
    '',
    `  Marketplace   ${stack.registryUrl}`,
    `  Facilitator   ${stack.facilitatorUrl}`,
    `  Skill server  ${stack.skillServerUrl}  (${displayPath(stack.module, cwd)}, reloaded when saved)`,
    `  Local chain   ${stack.rpcUrl}  (test USDC ${stack.token})`,
    `  Demo wallet   ${stack.demoWallet.address}  ${formatUnits(stack.demoWallet.balance, 6)} test USDC (test only)`,
    '',
    '  Pay for a skill from here:',
    `    ${call}`,
    '',
    `  State is kept in ${dir} (market dev --fresh starts over). Ctrl-C stops everything.`,
    '',
  ].join('\n');
}

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  examples?: unknown[];
  default?: unknown;
  const?: unknown;
  enum?: unknown[];
  minimum?: number;
  minLength?: number;
  items?: Schema;
  minItems?: number;
};

/**
 * An input built from a skill's input schema: its own `examples` first (the schema's, then each
 * property's), else `default`, `const` or the first `enum` value, else a value of the declared
 * type; only required properties are filled. The first candidate the schema accepts is used.
 */
export function exampleInput(schema: unknown): unknown {
  const s = schema as Schema | null | undefined;
  if (!s || typeof s !== 'object') return { hello: 'world' };
  const candidates = [...(Array.isArray(s.examples) ? s.examples : []), sampleOf({ ...s, examples: [] })];
  return candidates.find((value) => validateAgainst(s as JsonSchema, value).length === 0) ?? candidates.at(-1);
}

function sampleOf(s: Schema, depth = 0): unknown {
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if (s.default !== undefined) return s.default;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : (s.type ?? (s.properties ? 'object' : undefined));
  switch (type) {
    case 'object': {
      const sample: Record<string, unknown> = {};
      if (depth < 5) for (const name of s.required ?? []) sample[name] = sampleOf(s.properties?.[name] ?? {}, depth + 1);
      return sample;
    }
    case 'integer':
    case 'number':
      return Math.max(1, s.minimum ?? 1);
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => sampleOf(s.items ?? {}, depth + 1));
    case 'null':
      return null;
    case 'string':
      return 'paid per call in test USDC'.padEnd(s.minLength ?? 0, '.');
    default:
      return depth === 0 ? { hello: 'world' } : 'paid per call in test USDC';
  }
}
