/**
 * `market search` and `market skill list` say how a listing is priced: a flat price as it is, a
 * usage-based one as "up to" its price (the most a call costs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json, newCreator, type Creator } from '../support/catalogue';
import { spawnMarket } from '../support/process';
import { startWebRegistry, type WebRegistry } from '../support/web';

describe('market search and skill list with a usage-based listing', () => {
  let registry: WebRegistry;
  let creator: Creator;
  let flat: string;
  let byUse: string;
  const work = mkdtempSync(join(tmpdir(), 'market-listing-price-'));
  const word = `meter${crypto.randomUUID().slice(0, 6)}`;
  beforeAll(async () => {
    registry = await startWebRegistry();
    creator = await newCreator(registry.request);
    const group = (await creator.group()).name;
    const slugOf = async (body: Record<string, unknown>) => {
      const res = await creator.register({ groups: [group], ...body });
      if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
      return (await json<{ slug: string }>(res)).slug;
    };
    flat = await slugOf({ name: `${word}-flat`, price: '$0.001', description: 'Flat' });
    byUse = await slugOf({ name: `${word}-by-use`, price: '$0.002', description: 'By use', usageBased: true });
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

  it('market search prints "up to" before a usage-based price', async () => {
    const run = await market(['search', word, '--sort', 'price']);
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n').filter(Boolean)).toEqual([
      `${flat}\t$0.001\t${word}-flat — Flat`,
      `${byUse}\tup to $0.002\t${word}-by-use — By use`,
    ]);
  });

  it('market skill list prints "up to" before a usage-based price', async () => {
    const run = await market(['skill', 'list', '--api-url', registry.url, '--api-key', creator.key]);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines.find((l) => l.startsWith(`${byUse} `))).toStartWith(`${byUse}  up to $0.002  listed  `);
    expect(lines.find((l) => l.startsWith(`${flat} `))).toStartWith(`${flat}  $0.001  listed  `);
  });
});
