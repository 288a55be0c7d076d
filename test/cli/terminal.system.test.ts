/**
 * Registry text never drives the terminal: a listing whose description holds escape sequences
 * (clear screen, cursor moves, a window title, a hyperlink, 8-bit C1 controls) prints as its
 * visible text in `market search`, and as escaped JSON in `market info`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { terminalJson, terminalText } from '../../src/cli/terminal';
import { json, newCreator } from '../support/catalogue';
import { spawnMarket } from '../support/process';
import { startWebRegistry, type WebRegistry } from '../support/web';

const ESC = '\u001b';
/** Any byte that acts on a terminal: C0 but newline (and tab where said), DEL, C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL_BUT_TAB_AND_NEWLINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const HOSTILE =
  `Fast ${ESC}[2J${ESC}[1;1Hclean${ESC}]0;pwned title\u0007 ${ESC}]8;;https://evil.example/\u001b\\link${ESC}]8;;\u001b\\ ` +
  `\u009b31mred\u009b0m \u009d2;t\u009c bell\u0007 back\b del\u007f done${ESC}c`;

describe('terminalText', () => {
  it('drops escape sequences, C1 and C0 controls but keeps the visible text, tabs and newlines', () => {
    expect(terminalText(HOSTILE)).toBe('Fast clean link red  bell back del done');
    expect(terminalText('a\tb\nc')).toBe('a\tb\nc');
    expect(terminalText(`${ESC}]0;unterminated title`)).toBe('');
    expect(terminalText('plain café 漢字 ✓')).toBe('plain café 漢字 ✓');
  });
});

describe('terminalJson', () => {
  it('is the same JSON value with DEL and C1 escaped as well', () => {
    const value = { description: HOSTILE };
    const text = terminalJson(value);
    expect(text).not.toMatch(CONTROL_BUT_NEWLINE);
    expect(JSON.parse(text)).toEqual(value);
    expect(JSON.parse(terminalJson(value, true))).toEqual(value);
  });
});

describe('market search and info with escape sequences in a listing', () => {
  let registry: WebRegistry;
  let slug: string;
  const work = mkdtempSync(join(tmpdir(), 'market-terminal-'));
  const word = `tern${crypto.randomUUID().slice(0, 6)}`;
  beforeAll(async () => {
    registry = await startWebRegistry();
    const creator = await newCreator(registry.request);
    const res = await creator.register({ name: `${word}-tool`, description: HOSTILE });
    if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
    slug = (await json<{ slug: string }>(res)).slug;
  }, 60_000);
  afterAll(async () => {
    await registry?.close();
    rmSync(work, { recursive: true, force: true });
  });

  async function market(args: string[]) {
    const child = spawnMarket(args, { XDG_CONFIG_HOME: join(work, 'config'), MARKET_API_URL: registry.url }, work);
    const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    return { code, stdout, stderr };
  }

  it('market search prints the description without any control byte', async () => {
    const run = await market(['search', word]);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain(ESC);
    expect(run.stdout).not.toMatch(CONTROL_BUT_TAB_AND_NEWLINE);
    expect(run.stdout).toBe(`${slug}\t$0.001\t${word}-tool — Fast clean link red bell back del done\n`);
  });

  it('market info prints the listing as JSON holding the same text, escaped', async () => {
    const run = await market(['info', slug]);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(CONTROL_BUT_NEWLINE);
    expect(JSON.parse(run.stdout)).toMatchObject({ slug, description: HOSTILE });
  });
});
