/**
 * The code blocks of the README and the guides that can run here are checked against the code:
 * every TypeScript block (and the skill module the README's "Your first skill" writes) type-checks
 * against the SDK as a user's file would; the MCP host config is what `market mcp --print-config`
 * prints; the compose block exports what compose.yaml reads. (The README's shell blocks of "Your
 * first skill" run as written in test/dev/first-skill.test.ts.)
 */
import { describe, expect, it } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { printConfigSnippets } from '../../src/mcp/print-config';

const ROOT = join(import.meta.dir, '../..');
const GUIDES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

interface Block {
  file: string;
  line: number;
  lang: string;
  code: string;
}

/** The fenced blocks of every guide, dedented, with the line they start on. */
function blocks(): Block[] {
  return GUIDES.flatMap((file) => {
    const markdown = readFileSync(join(ROOT, file), 'utf8');
    return [...markdown.matchAll(/^([ \t]*)```(\w*)\n([\s\S]*?)^\1```$/gm)].map((m) => ({
      file,
      line: markdown.slice(0, m.index).split('\n').length,
      lang: m[2]!,
      code: m[3]!
        .split('\n')
        .map((l) => l.slice(Math.min(m[1]!.length, l.length - l.trimStart().length)))
        .join('\n'),
    }));
  });
}

/** Type-checks `files` (name → source) as files of a project beside this repository's tsconfig; tsc's complaints, or ''. */
function typeCheck(files: Record<string, string>): { code: number; output: string } {
  // Inside the repository, so that the tsconfig's `paths` give the SDK's entries and node_modules resolve.
  const dir = mkdtempSync(join(ROOT, '.doc-blocks-'));
  try {
    for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ extends: '../tsconfig.json', include: ['*.ts'] }));
    const tsc = Bun.spawnSync([join(ROOT, 'node_modules/.bin/tsc'), '-p', dir, '--checkers', '1'], { stdout: 'pipe', stderr: 'pipe' });
    return { code: tsc.exitCode, output: `${tsc.stdout.toString()}${tsc.stderr.toString()}`.replaceAll(`${basename(dir)}/`, '') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const fileName = (block: Block) => `${block.file.replace(/\W+/g, '-')}-${block.line}.ts`;

const WRONG = "import { SkillMarket } from 'skill-market';\nnew SkillMarket({ apiUrl: 'http://localhost:3000', maxPriceUsd: 5 });\n";
let checkedOnce: { code: number; output: string } | undefined;
/**
 * Every TypeScript block, the README's first skill module, and one block that misuses the SDK
 * (`wrong.ts`), type-checked together in one tsc run (each file is a module of its own, so an
 * error stays in its file): tsc's complaints split into wrong.ts's and every other file's.
 */
function checkedBlocks(): { code: number; others: string[]; wrong: string[] } {
  const all = blocks();
  const typescript = all.filter((b) => b.lang === 'ts');
  expect(typescript.map((b) => b.file)).toEqual(expect.arrayContaining(['docs/consumers.md', 'docs/creators.md']));
  const module = all.find((b) => b.file === 'README.md' && b.code.includes("cat > my-skill.ts <<'EOF'"));
  const moduleSource = /<<'EOF'\n([\s\S]*?)\nEOF/.exec(module?.code ?? '')?.[1];
  expect(moduleSource).toContain("from 'skill-market/creator'");
  const files = Object.fromEntries([
    ...typescript.map((b) => [fileName(b), b.code]),
    ['readme-my-skill.ts', moduleSource!],
    ['wrong.ts', WRONG],
  ]);
  checkedOnce ??= typeCheck(files);
  // One complaint per error: its first line names the file, indented lines go on with it.
  const complaints = checkedOnce.output
    .split(/\n(?=\S)/)
    .map((c) => c.trim())
    .filter((c) => c !== '');
  return {
    code: checkedOnce.code,
    others: complaints.filter((c) => !c.startsWith('wrong.ts')),
    wrong: complaints.filter((c) => c.startsWith('wrong.ts')),
  };
}

describe('code blocks of the README and docs/', () => {
  it('every TypeScript block, and the README’s first skill module, type-checks against the SDK', () => {
    expect(checkedBlocks().others).toEqual([]);
  }, 120_000);

  it('a block that misuses the SDK does not type-check (the check can fail)', () => {
    const { code, wrong } = checkedBlocks();
    expect(code).not.toBe(0);
    expect(wrong.join('\n')).toContain('maxPriceUsd');
  }, 120_000);

  it('the MCP host config is the one `market mcp --print-config` prints, limits included', () => {
    const block = blocks().find((b) => b.file === 'docs/consumers.md' && b.lang === 'json');
    const documented = JSON.parse(block!.code).mcpServers['skill-market'];
    const printed = printConfigSnippets(undefined, { MARKET_API_URL: 'https://registry.example' });
    const snippet = JSON.parse(/^(\{[\s\S]*?^\})$/m.exec(printed)![1]!).mcpServers['skill-market'];
    expect(Object.keys(documented).sort()).toEqual(Object.keys(snippet).sort());
    expect(documented.args.at(-1)).toBe('mcp');
    expect(Object.keys(documented.env).sort()).toEqual(Object.keys(snippet.env).sort());
    for (const limit of ['MARKET_MCP_MAX_PRICE', 'MARKET_MCP_BUDGET', 'MARKET_MCP_BUDGET_PERIOD']) {
      expect({ limit, value: documented.env[limit] }).toEqual({ limit, value: snippet.env[limit] });
    }
  });

  it('the compose block of the operators’ guide exports every variable compose.yaml requires, and runs market doctor', () => {
    const block = blocks().find((b) => b.file === 'docs/operators.md' && b.code.includes('docker compose up'));
    const exported = new Set([...block!.code.matchAll(/\b([A-Z][A-Z0-9_]+)=/g)].map((m) => m[1]));
    const compose = readFileSync(join(ROOT, 'compose.yaml'), 'utf8');
    const required = [...compose.matchAll(/\$\{([A-Z][A-Z0-9_]+):\?/g)].map((m) => m[1]!);
    expect(required.length).toBeGreaterThan(0);
    expect(required.filter((name) => !exported.has(name))).toEqual([]);
    expect(block!.code).toContain('market doctor');
  });
});
