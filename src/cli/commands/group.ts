import { parseArgs } from 'node:util';
import { reportFailures } from '../consumer';
import { creatorConnection, registryClient } from '../creator';
import { UsageError } from '../errors';
import { terminalText } from '../terminal';

const OPTIONS = {
  description: { type: 'string' },
  json: { type: 'boolean' },
  dev: { type: 'string' },
  'api-url': { type: 'string' },
  'api-key': { type: 'string' },
} as const;

/**
 * `market group new <name> [--description D] | list`: a creator's groups (a skill names at least one
 * of its creator's groups). Creator key from --dev [dir] (the demo creator of `market dev`),
 * --api-key, MARKET_API_KEY or the stored login.
 */
export async function groupCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: true });
  const [sub, ...rest] = positionals;
  if (sub !== 'new' && sub !== 'list')
    throw new UsageError(sub === undefined ? 'group needs a subcommand: new or list' : `unknown group subcommand "${sub}"`);
  if (sub === 'new' && rest.length !== 1) throw new UsageError('usage: market group new <name> [--description D]');
  if (sub === 'list' && rest.length > 0) throw new UsageError(`group list takes no arguments, got "${rest[0]}"`);
  await reportFailures(async () => {
    const client = registryClient(await creatorConnection(values, process.env));
    if (sub === 'new') {
      const group = await client.createGroup({ name: rest[0]!, ...(values.description ? { description: values.description } : {}) });
      print(values.json ? JSON.stringify(group) : `Made the group ${group.name} (${group.slug}): name it in a skill's groups.`);
      return;
    }
    const me = await client.me();
    const groups = await client.groups(me.walletAddress);
    if (values.json) return print(JSON.stringify(groups));
    if (groups.length === 0) return print('No groups yet. Make one with: market group new <name>');
    for (const g of groups) print(`${g.slug}  ${g.name}${g.description ? `  ${g.description}` : ''}`);
  });
}

const print = (line: string) => void process.stdout.write(`${terminalText(line)}\n`);
