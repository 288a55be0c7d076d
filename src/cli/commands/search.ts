import { parseArgs } from 'node:util';
import type { SearchFilters } from 'skill-market';
import { UsageError } from '../errors';
import { CLIENT_FLAGS, clientFrom, printJson, reportClientFailures } from '../market-client';
import { priceLabel } from 'skill-market/registry';
import { terminalText } from '../terminal';

const SORTS = ['relevance', 'popular', 'newest', 'price', 'revenue', 'rating'] as const;

/**
 * `market search [query] [--group G] [--category C] [--min-price P] [--max-price P] [--sort S]
 * [--limit N] [--cursor C] [--discovery URL]... [--json]`: one line per skill (slug, price, name,
 * description; a usage-based skill's price reads "up to $0.01"); the next page's `--cursor` on stderr; then what the other catalogues (--discovery,
 * MARKET_DISCOVERY) list, one line each (URL, price, name, `from <catalogue>`): `market call <URL>`
 * pays one. `--json` prints `{skills, nextCursor, discovered, catalogueProblems}` instead. No wallet needed.
 */
export async function searchCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      ...CLIENT_FLAGS,
      group: { type: 'string' },
      category: { type: 'string' },
      creator: { type: 'string' },
      'min-price': { type: 'string' },
      'max-price': { type: 'string' },
      sort: { type: 'string' },
      limit: { type: 'string' },
      cursor: { type: 'string' },
    },
  });
  const filters: SearchFilters = {};
  if (values.group) filters.group = values.group;
  if (values.category) filters.category = values.category;
  if (values.creator) filters.creator = values.creator;
  if (values['min-price']) filters.minPrice = values['min-price'];
  if (values['max-price']) filters.maxPrice = values['max-price'];
  if (values.cursor) filters.cursor = values.cursor;
  if (values.sort !== undefined) {
    if (!(SORTS as readonly string[]).includes(values.sort)) throw new UsageError(`--sort must be one of ${SORTS.join(', ')}`);
    filters.sort = values.sort as SearchFilters['sort'];
  }
  if (values.limit !== undefined) {
    const limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit must be an integer 1..100');
    filters.limit = limit;
  }
  await reportClientFailures(async () => {
    const market = await clientFrom(values, process.env, false);
    const page = await market.search(positionals.join(' '), filters);
    if (values.json) return printJson(page, true);
    if (page.skills.length === 0) process.stderr.write('no skills found\n');
    for (const skill of page.skills) {
      // Listings are the creators' text: escape sequences in them never reach the terminal.
      const description = skill.description ? ` — ${terminalText(skill.description).replace(/\s+/g, ' ').slice(0, 80)}` : '';
      process.stdout.write(`${terminalText(`${skill.slug}\t${priceLabel(skill)}\t${skill.name}`)}${description}\n`);
    }
    if (page.nextCursor) process.stderr.write(`more: --cursor ${terminalText(page.nextCursor)}\n`);
    // Other catalogues' finds (--discovery), called by URL: each says where it came from.
    for (const skill of page.discovered) {
      process.stdout.write(`${terminalText(`${skill.slug}\t${skill.price}\t${skill.name}\tfrom ${skill.source}`)}\n`);
    }
    for (const problem of page.catalogueProblems) {
      process.stderr.write(`${terminalText(`catalogue ${problem.source} could not be read: ${problem.message}`)}\n`);
    }
  });
}
