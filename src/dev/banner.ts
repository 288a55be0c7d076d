/** The banner `market dev` prints once everything runs: where things are and one paid call to copy. */
import { formatUnits } from 'viem';
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

/** A small input that satisfies a skill's input schema (required fields filled), or a greeting for none. */
function exampleInput(schema: unknown): unknown {
  const s = schema as { type?: string; properties?: Record<string, { type?: string }>; required?: string[] } | null | undefined;
  if (s?.type !== 'object' || !s.properties) return { hello: 'world' };
  const sample: Record<string, unknown> = {};
  for (const name of s.required ?? []) {
    const type = s.properties[name]?.type;
    sample[name] =
      type === 'integer' || type === 'number'
        ? 1
        : type === 'boolean'
          ? true
          : type === 'array'
            ? []
            : type === 'object'
              ? {}
              : 'paid per call in test USDC';
  }
  return sample;
}
