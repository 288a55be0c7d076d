/** The banner `market dev` prints once everything runs: where things are and one paid call to copy. */
import { formatUnits } from 'viem';
import { validateAgainst, type JsonSchema } from 'skill-market/json-schema';
import { exampleOf } from '../web/app/lib/schema';
import { displayPath, selfCommand, shellQuote } from './self';
import type { DevStack } from './stack';

export function banner(stack: DevStack, cwd = process.cwd()): string {
  const skill = stack.skills.find((s) => s.name === 'word-count') ?? stack.skills[0];
  const dir = displayPath(stack.paths.root, cwd);
  const call = skill
    ? `${selfCommand(cwd)} call --dev ${shellQuote(dir)} ${skill.slug} ${shellQuote(JSON.stringify(exampleInput(skill.inputSchema)))}`
    : '(the module has no skills)';
  const channels = `${selfCommand(cwd)} channels --dev ${shellQuote(dir)}`;
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
    '  It pays through a payment channel (x402 batch-settlement): the first call deposits ten calls’ worth,',
    '  each call after it is a signed voucher with no transaction. Add --payment exact for a transfer per call.',
    '  Your channels (deposit, charged, claimed by the skill server):',
    `    ${channels}`,
    '',
    `  State is kept in ${dir} (market dev --fresh starts over). Ctrl-C stops everything.`,
    '',
  ].join('\n');
}

/**
 * The input of the banner's call, from the skill's input schema: the schema's own `examples` first,
 * then one built as the skill page's snippets build it (each property's example, default, first
 * enum value, else a value of its type); the first the schema accepts.
 */
export function exampleInput(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return { hello: 'world' };
  const s = schema as JsonSchema;
  const candidates = [...(Array.isArray(s.examples) ? s.examples : []), exampleOf({ ...s, examples: [] })];
  return candidates.find((value) => validateAgainst(s, value).length === 0) ?? candidates.at(-1);
}
