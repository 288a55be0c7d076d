/**
 * Every relative link of the README, BENCHMARKS.md and the guides in docs/ resolves: the file exists,
 * and an anchor names a heading of the linked Markdown file (GitHub's heading slugs) or an element
 * id in it. Links inside code (fenced blocks, code spans) are not links.
 */
import { describe, expect, it } from 'bun:test';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import GithubSlugger from 'github-slugger';

const ROOT = join(import.meta.dir, '../..');
const DOCS = [
  'README.md',
  'BENCHMARKS.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The Markdown without fenced code blocks, each line kept (blank) so line numbers stay. */
function withoutCode(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (opening && opening[0] === fence[0] && opening.length >= fence.length && line.trim() === opening) fence = undefined;
      return '';
    }
    if (opening) {
      fence = opening;
      return '';
    }
    return line.replace(/(`+)[^`]*?\1/g, '');
  });
}

/** The anchors a Markdown file offers: its headings' slugs (numbered when repeated) and explicit ids. */
function anchorsOf(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (opening && opening[0] === fence[0] && line.trim() === opening) fence = undefined;
      continue;
    }
    if (opening) {
      fence = opening;
      continue;
    }
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) anchors.add(slugger.slug(heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')));
    for (const id of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id[1]!);
  }
  return anchors;
}

interface Broken {
  file: string;
  line: number;
  target: string;
  why: string;
}

/** The relative links of `file` (a path under ROOT) that do not resolve. */
function brokenLinks(file: string, markdown: string): Broken[] {
  const broken: Broken[] = [];
  for (const [index, line] of withoutCode(markdown).entries()) {
    for (const match of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
      const [path = '', anchor] = target.split('#');
      const linked = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURIComponent(path));
      const at = { file, line: index + 1, target };
      if (!existsSync(linked)) {
        broken.push({ ...at, why: `no file ${relative(ROOT, linked)}` });
        continue;
      }
      if (anchor === undefined) continue;
      if (statSync(linked).isDirectory() || !linked.endsWith('.md')) {
        broken.push({ ...at, why: 'an anchor into a file that is not Markdown' });
        continue;
      }
      const linkedMarkdown = path === '' ? markdown : readFileSync(linked, 'utf8');
      if (!anchorsOf(linkedMarkdown).has(decodeURIComponent(anchor))) {
        broken.push({ ...at, why: `no heading or id "${anchor}" in ${relative(ROOT, linked)}` });
      }
    }
  }
  return broken;
}

describe('links in the documentation', () => {
  it('finds the guides: README, BENCHMARKS and one per reader in docs/', () => {
    expect(DOCS).toEqual(
      expect.arrayContaining([
        'README.md',
        'BENCHMARKS.md',
        'docs/consumers.md',
        'docs/creators.md',
        'docs/operators.md',
        'docs/architecture.md',
        'docs/registry-api.md',
      ]),
    );
  });

  it('every relative link resolves to a file, and every anchor to a heading or id there', () => {
    const links = DOCS.flatMap(
      (file) =>
        withoutCode(readFileSync(join(ROOT, file), 'utf8'))
          .join('\n')
          .match(/\]\((?!https?:)[^)]+\)/g) ?? [],
    );
    expect(links.length).toBeGreaterThan(50);
    const broken = DOCS.flatMap((file) => brokenLinks(file, readFileSync(join(ROOT, file), 'utf8')));
    expect(broken).toEqual([]);
  });

  it('tells a broken link, a missing anchor and a link in code apart', () => {
    const markdown = [
      '# A title',
      '## Going `live`, twice',
      '## Going `live`, twice',
      '[ok](#a-title) [ok too](#going-live-twice-1) [file](docs/consumers.md#contents) [web](https://x402.org)',
      '[gone](docs/nowhere.md) [no anchor](#going-dead) [no anchor there](docs/creators.md#not-a-heading)',
      '`[in code](docs/nowhere.md)`',
      '```sh',
      '[in a block](docs/nowhere.md)',
      '```',
    ].join('\n');
    expect(brokenLinks('README.md', markdown).map((b) => `${b.line} ${b.target}: ${b.why}`)).toEqual([
      '5 docs/nowhere.md: no file docs/nowhere.md',
      '5 #going-dead: no heading or id "going-dead" in README.md',
      '5 docs/creators.md#not-a-heading: no heading or id "not-a-heading" in docs/creators.md',
    ]);
  });

  it('the guides each open with a table of contents', () => {
    for (const file of ['docs/consumers.md', 'docs/creators.md', 'docs/operators.md', 'docs/architecture.md', 'docs/registry-api.md']) {
      const markdown = readFileSync(join(ROOT, file), 'utf8');
      const contents = markdown.split('\n## ')[1] ?? '';
      expect({ file, contents: contents.split('\n')[0] }).toEqual({ file, contents: 'Contents' });
      // Every second-level heading is listed in it.
      const listed = new Set([...contents.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]));
      const slugger = new GithubSlugger();
      const headings = [...markdown.matchAll(/^## (.+)$/gm)].map((m) => slugger.slug(m[1]!)).filter((slug) => slug !== 'contents');
      expect({ file, unlisted: headings.filter((slug) => !listed.has(slug)) }).toEqual({ file, unlisted: [] });
    }
  });
});
