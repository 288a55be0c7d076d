/**
 * The copy-ready ways to call a skill the skill page shows: the SDK, the CLI, and curl (which
 * shows the 402 terms). Every value from the listing is quoted for its language (./quote.ts): the
 * endpoint, slug and schema are the creator's text, and a snippet is pasted into a shell or a file.
 */
import type { Skill } from 'skill-market/registry';
import { jsString, shellQuote } from './quote';
import { exampleOf } from './schema';

export interface CallSnippets {
  sdk: string;
  cli: string;
  curl: string;
}

/** With `devMode` (a page of `market dev`), the CLI snippet pays from the demo wallet of that marketplace (`--dev`). */
export function callSnippets(
  skill: Pick<Skill, 'slug' | 'price' | 'endpoint' | 'inputSchema'>,
  registry: string,
  devMode = false,
): CallSnippets {
  const input = JSON.stringify(exampleOf(skill.inputSchema));
  const sdk = `import { SkillMarket } from 'skill-market';

const market = new SkillMarket({
  apiUrl: ${jsString(registry)},
  wallet: process.env.MARKET_PRIVATE_KEY, // signs the payment; never sent
  maxPrice: ${jsString(skill.price)},
});
const result = await market.call(${jsString(skill.slug)}, ${input});`;
  const cli = devMode
    ? `market call --dev ${shellQuote(skill.slug)} ${shellQuote(input)} --max-price ${shellQuote(skill.price)}`
    : `market call ${shellQuote(skill.slug)} ${shellQuote(input)} --api-url ${shellQuote(registry)} --max-price ${shellQuote(skill.price)}`;
  const curl = `# Unpaid: answers 402 with the payment terms in the PAYMENT-REQUIRED header
curl -i -X POST ${shellQuote(skill.endpoint)} \\
  -H 'content-type: application/json' \\
  -d ${shellQuote(input)}`;
  return { sdk, cli, curl };
}
