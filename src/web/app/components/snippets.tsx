import { pageConfig } from '../lib/config';
import { exampleOf } from '../lib/schema';
import type { Skill } from 'skill-market/registry';
import { CodeBlock } from './copy-button';

/** Copy-ready ways to call the skill: the SDK, the CLI, and curl (which shows the 402 terms). */
export function Snippets({ skill }: { skill: Skill }) {
  const registry = pageConfig.value?.publicUrl ?? window.location.origin;
  const input = JSON.stringify(exampleOf(skill.inputSchema));
  const quoted = `'${input.replaceAll("'", "'\\''")}'`;
  const sdk = `import { SkillMarket } from 'skill-market';

const market = new SkillMarket({
  apiUrl: '${registry}',
  wallet: process.env.MARKET_PRIVATE_KEY, // signs the payment; never sent
  maxPrice: '${skill.price}',
});
const result = await market.call('${skill.slug}', ${input});`;
  const cli = `market call ${skill.slug} ${quoted} --api-url ${registry} --max-price '${skill.price}'`;
  const curl = `# Unpaid: answers 402 with the payment terms in the PAYMENT-REQUIRED header
curl -i -X POST ${skill.endpoint} \\
  -H 'content-type: application/json' \\
  -d ${quoted}`;
  return (
    <div class="snippets">
      <CodeBlock label="SDK (TypeScript)" code={sdk} />
      <CodeBlock label="CLI" code={cli} />
      <CodeBlock label="curl" code={curl} />
    </div>
  );
}
