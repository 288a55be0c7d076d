/**
 * The skill page's snippets quote what they take from a listing: pasted into a real shell, the
 * curl and CLI lines run exactly the command shown (a stand-in `curl` and `market` on PATH record
 * their arguments) and nothing else, whatever the endpoint, slug or schema hold; read as
 * TypeScript, the SDK snippet's strings are the listing's values.
 */
import { describe, expect, it } from 'bun:test';
import { jsString, shellQuote } from '../../src/web/app/lib/quote';
import { callSnippets } from '../../src/web/app/lib/snippets';
import { runInShell } from '../support/web';

const HOSTILE = [
  '$(touch$IFS.pwned)',
  '`touch .pwned`',
  "a'; touch .pwned; echo '",
  'a" && touch .pwned && echo "',
  'a | touch .pwned',
  'a\ntouch .pwned',
  '$IFS*?[a]~!#{x,y}',
  "it's",
  '',
  '\\',
];

describe('shellQuote', () => {
  for (const text of HOSTILE) {
    it(`passes ${JSON.stringify(text)} to a command as one argument`, () => {
      expect(runInShell(`curl ${shellQuote(text)}`)).toEqual({ args: [[text]], pwned: false, exitCode: 0, stderr: '' });
    });
  }
});

describe('jsString', () => {
  for (const text of [...HOSTILE, '</script>', '\u2028\u2029', '$' + '{x}']) {
    it(`reads back as ${JSON.stringify(text)} in JavaScript`, () => {
      expect(new Function(`return ${jsString(text)};`)()).toBe(text);
    });
  }
});

describe('callSnippets', () => {
  const registry = 'https://registry.example.com/$(touch$IFS.pwned)';
  const skill = {
    slug: "translate'$(touch .pwned)'",
    price: '$0.001',
    endpoint: 'https://skills.example.com/$(touch$IFS.pwned)/translate',
    inputSchema: { type: 'object', properties: { "te'xt": { type: 'string' } }, required: ["te'xt"] },
  };
  const snippets = callSnippets(skill, registry);
  const input = JSON.stringify({ "te'xt": 'text' });

  it('curl: the endpoint and input reach curl as they are, and nothing else runs', () => {
    expect(runInShell(snippets.curl)).toEqual({
      args: [['-i', '-X', 'POST', skill.endpoint, '-H', 'content-type: application/json', '-d', input]],
      pwned: false,
      exitCode: 0,
      stderr: '',
    });
  });

  it('CLI: slug, input, registry and price reach market as they are', () => {
    expect(runInShell(snippets.cli)).toEqual({
      args: [['call', skill.slug, input, '--api-url', registry, '--max-price', '$0.001']],
      pwned: false,
      exitCode: 0,
      stderr: '',
    });
  });

  it('CLI on a page of market dev: pays from its demo wallet with --dev, slug and input as they are', () => {
    expect(runInShell(callSnippets(skill, registry, true).cli)).toEqual({
      args: [['call', '--dev', skill.slug, input, '--max-price', '$0.001']],
      pwned: false,
      exitCode: 0,
      stderr: '',
    });
  });

  it('SDK: the strings in the code are the listing’s values', () => {
    expect(snippets.sdk).toContain(`apiUrl: ${JSON.stringify(registry)},`);
    expect(snippets.sdk).toContain(`market.call(${JSON.stringify(skill.slug)}, ${input});`);
    const call = /market\.call\((.*)\);$/m.exec(snippets.sdk)![1]!;
    expect(new Function(`return [${call}];`)()).toEqual([skill.slug, { "te'xt": 'text' }]);
  });
});
