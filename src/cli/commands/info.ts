import { parseArgs } from 'node:util';
import { UsageError } from '../errors';
import { CLIENT_FLAGS, clientFrom, printJson, reportClientFailures } from '../market-client';

/** `market info <slug> [--json]`: the skill's full listing as JSON (price, endpoint, schemas, counters). */
export async function infoCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, strict: true, options: CLIENT_FLAGS });
  const [slug, ...extra] = positionals;
  if (!slug) throw new UsageError('info needs a skill slug: market info <slug>');
  if (extra.length > 0) throw new UsageError(`info takes one slug, got also "${extra[0]}"`);
  await reportClientFailures(async () => {
    const market = await clientFrom(values, process.env, false);
    printJson(await market.info(slug), values.json);
  });
}
