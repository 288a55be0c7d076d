import { parseArgs } from 'node:util';
import { CommandFailure, reportFailures } from '../consumer';
import { creatorConnection, registryClient } from '../creator';
import { UsageError } from '../errors';
import { updateSkill } from 'skill-market/creator';
import { priceLabel } from 'skill-market/registry';
import { terminalText } from '../terminal';
import { parseTiers, parseTrial, samePlans, tiersText, trialText } from './skill-plans';

const OPTIONS = {
  json: { type: 'boolean' },
  dev: { type: 'string' },
  'api-url': { type: 'string' },
  'api-key': { type: 'string' },
  period: { type: 'string' },
} as const;

/**
 * `market skill list | price <slug> <price> | trial <slug> <calls>/<period>|off | tiers <slug>
 * <after>:<price>,…|off [--period]`: a creator's listings, and the price, free trial or volume
 * prices of one, as the dashboard edits them (PATCH /skills/:slug). The listing holds them: running
 * skill servers follow within seconds, and restarting them keeps them. Creator key as for `market group`.
 */
export async function skillCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: true });
  const [sub, ...rest] = positionals;
  if (sub !== 'list' && sub !== 'price' && sub !== 'trial' && sub !== 'tiers')
    throw new UsageError(sub === undefined ? 'skill needs a subcommand: list, price, trial or tiers' : `unknown skill subcommand "${sub}"`);
  if (sub === 'price' && rest.length !== 2) throw new UsageError('usage: market skill price <slug> <price, e.g. $0.005>');
  if (sub === 'trial' && rest.length !== 2) throw new UsageError('usage: market skill trial <slug> <calls>/<period>|off, e.g. 3/day');
  if (sub === 'tiers' && rest.length !== 2)
    throw new UsageError("usage: market skill tiers <slug> '<after>:<price>,…'|off [--period day|week|month], e.g. 1000:$0.0008");
  if (values.period !== undefined && sub !== 'tiers') throw new UsageError('--period goes with skill tiers');
  if (sub === 'list' && rest.length > 0) throw new UsageError(`skill list takes no arguments, got "${rest[0]}"`);
  const update =
    sub === 'trial' ? { trial: parseTrial(rest[1]!) } : sub === 'tiers' ? { tiers: parseTiers(rest[1]!, values.period) } : undefined;
  await reportFailures(async () => {
    const connection = await creatorConnection(values, process.env);
    if (sub === 'price') {
      const [slug, price] = rest as [string, string];
      const done = await updateSkill(slug, { price }, connection);
      if (!done.success) throw new CommandFailure(`the price of ${slug} was not changed: ${done.error}`);
      const listing = await registryClient(connection).skill(slug);
      print(`${slug} now costs ${priceLabel(listing)} a call (its listing).`);
      print(await serverFollows(listing.endpoint, (health) => health.prices?.[listing.name] === listing.price, 'asks it'));
      return;
    }
    if (update) {
      const slug = rest[0]!;
      const done = await updateSkill(slug, update, connection);
      if (!done.success)
        throw new CommandFailure(`the ${sub === 'trial' ? 'free trial' : 'volume prices'} of ${slug} were not changed: ${done.error}`);
      const listing = await registryClient(connection).skill(slug);
      print(`${slug} now has ${sub === 'trial' ? trialText(listing.trial) : tiersText(listing.tiers)} (its listing).`);
      print(await serverFollows(listing.endpoint, (health) => samePlans(health.plans?.[listing.name], listing), 'gives them'));
      return;
    }
    const skills = await registryClient(connection).ownSkills();
    if (values.json) return print(JSON.stringify(skills));
    if (skills.length === 0) return print('No skills yet: serve a module with market serve <module.ts> --endpoint <URL> (or --dev).');
    for (const s of skills) print(`${s.slug}  ${priceLabel(s)}  ${s.isActive ? 'listed' : 'inactive'}  ${s.endpoint}`);
  });
}

const print = (line: string) => void process.stdout.write(`${terminalText(line)}\n`);

/** How long `skill price|trial|tiers` waits for the skill server to follow (it reads its listing every 2 s). */
const FOLLOW_WAIT_MS = 15_000;

/** What a skill server's `/health` tells of its skills. */
interface Health {
  prices?: Record<string, string>;
  plans?: Record<string, unknown>;
}

/**
 * Waits until the skill's server follows the listing (`follows` its `/health`: each skill's price,
 * trial and volume prices), so a call right after gets the new terms; a server that cannot be
 * reached or does not follow is said so.
 */
async function serverFollows(endpoint: string, follows: (health: Health) => boolean, doing: string): Promise<string> {
  const server = endpoint.replace(/\/[^/?#]*([?#].*)?$/, '');
  const deadline = Date.now() + FOLLOW_WAIT_MS;
  let last = 'it could not be reached';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${server}/health`, { signal: AbortSignal.timeout(2_000) });
      if (follows((await res.json()) as Health)) return `Its skill server (${server}) ${doing} now.`;
      last = 'it has not followed yet';
    } catch {
      last = 'it could not be reached';
    }
    await Bun.sleep(200);
  }
  return `Its skill server (${server}) does not follow yet (${last}): a server started by market serve follows its listing within seconds.`;
}
