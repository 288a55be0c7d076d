import { pageConfig } from '../lib/config';
import { callSnippets } from '../lib/snippets';
import type { Skill } from 'skill-market/registry';
import { CodeBlock } from './copy-button';

/** Copy-ready ways to call the skill (lib/snippets.ts): the SDK, the CLI, and curl. */
export function Snippets({ skill }: { skill: Skill }) {
  const config = pageConfig.value;
  const { sdk, cli, curl } = callSnippets(skill, config?.publicUrl ?? window.location.origin, config?.devMode ?? false);
  return (
    <div class="snippets">
      <CodeBlock label="SDK (TypeScript)" code={sdk} />
      <CodeBlock label="CLI" code={cli} />
      <CodeBlock label="curl" code={curl} />
    </div>
  );
}
