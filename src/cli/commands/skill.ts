import { parseArgs } from 'node:util';
import { CommandFailure, reportFailures } from '../consumer';
import { creatorConnection, registryClient } from '../creator';
import { UsageError } from '../errors';
import { updateSkill } from 'skill-market/creator';
import { terminalText } from '../terminal';

const OPTIONS = {
  json: { type: 'boolean' },
  dev: { type: 'string' },
  'api-url': { type: 'string' },
  'api-key': { type: 'string' },
} as const;

/**
 * `market skill list | price <slug> <price>`: a creator's listings, and the price of one, as the
 * dashboard edits it (PATCH /skills/:slug). The listing holds the one price: running skill servers
 * ask it within seconds, and restarting them keeps it. Creator key as for `market group`.
 */
export async function skillCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: true });
  const [sub, ...rest] = positionals;
  if (sub !== 'list' && sub !== 'price')
    throw new UsageError(sub === undefined ? 'skill needs a subcommand: list or price' : `unknown skill subcommand "${sub}"`);
  if (sub === 'price' && rest.length !== 2) throw new UsageError('usage: market skill price <slug> <price, e.g. $0.005>');
  if (sub === 'list' && rest.length > 0) throw new UsageError(`skill list takes no arguments, got "${rest[0]}"`);
  await reportFailures(async () => {
    const connection = await creatorConnection(values, process.env);
    if (sub === 'price') {
      const [slug, price] = rest as [string, string];
      const done = await updateSkill(slug, { price }, connection);
      if (!done.success) throw new CommandFailure(`the price of ${slug} was not changed: ${done.error}`);
      const listing = await registryClient(connection).skill(slug);
      print(`${slug} now costs ${listing.price} a call (its listing).`);
      print(await serverFollows(listing.endpoint, listing.name, listing.price));
      return;
    }
    const skills = await registryClient(connection).ownSkills();
    if (values.json) return print(JSON.stringify(skills));
    if (skills.length === 0) return print('No skills yet: serve a module with market serve <module.ts> --endpoint <URL> (or --dev).');
    for (const s of skills) print(`${s.slug}  ${s.price}  ${s.isActive ? 'listed' : 'inactive'}  ${s.endpoint}`);
  });
}

const print = (line: string) => void process.stdout.write(`${terminalText(line)}\n`);

/** How long `skill price` waits for the skill server to ask the new price (it reads its listing every 2 s). */
const FOLLOW_WAIT_MS = 15_000;

/**
 * Waits until the skill's server asks `price` (its `/health` lists each skill's price), so a call
 * right after pays the new price; a server that cannot be reached or does not follow is said so.
 */
async function serverFollows(endpoint: string, name: string, price: string): Promise<string> {
  const server = endpoint.replace(/\/[^/?#]*([?#].*)?$/, '');
  const deadline = Date.now() + FOLLOW_WAIT_MS;
  let last = 'it could not be reached';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${server}/health`, { signal: AbortSignal.timeout(2_000) });
      const body = (await res.json()) as { prices?: Record<string, string> };
      if (body.prices?.[name] === price) return `Its skill server (${server}) asks it now.`;
      last = body.prices?.[name] ? `it still asks ${body.prices[name]}` : 'it does not tell its prices';
    } catch {
      last = 'it could not be reached';
    }
    await Bun.sleep(200);
  }
  return `Its skill server (${server}) does not ask it yet (${last}): a server started by market serve follows its listing within seconds.`;
}
