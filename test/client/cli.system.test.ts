/**
 * `market search`, `market info` and `market call` as processes, against the registry served in
 * this test and the test skill server on the local chain.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encryptKeystore, writeKeystoreFile } from 'skill-market/wallet';
import { spawnMarket } from '../support/process';
import { NETWORK, useWorld } from './support/world';

const world = useWorld({ chain: true });
const work = mkdtempSync(join(tmpdir(), 'market-client-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function market(args: string[], env: Record<string, string> = {}) {
  const child = spawnMarket(args, { XDG_CONFIG_HOME: join(work, 'config'), MARKET_API_URL: world.registryUrl, ...env }, work);
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, stdout, stderr };
}

const paying = () => ['--network', NETWORK, '--asset', world.asset.address];

describe('market search and info', () => {
  it('lists matching skills one per line, and as JSON with --json', async () => {
    const word = `quokka${crypto.randomUUID().slice(0, 6)}`;
    const skill = await world.addSkill({ name: `${word}-translate` });
    const text = await market(['search', word]);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(`${skill.slug}\t$0.01\t${skill.name} — A useful skill\n`);
    const json = await market(['search', word, '--json', '--limit', '5']);
    expect(JSON.parse(json.stdout)).toMatchObject({ skills: [{ slug: skill.slug, priceAtomic: '10000' }] });
  });

  it('prints one listing as JSON, and exits 1 naming an unknown slug', async () => {
    const skill = await world.addSkill();
    const found = await market(['info', skill.slug, '--api-url', world.registryUrl], { MARKET_API_URL: 'http://127.0.0.1:1' });
    expect(found.code).toBe(0);
    expect(JSON.parse(found.stdout)).toMatchObject({ id: skill.id, endpoint: `${world.server.url}/${skill.name}`, network: NETWORK });
    const missing = await market(['info', 'no-such-skill']);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toBe('market: No skill no-such-skill in the registry\n');
  });
});

describe('market call', () => {
  it('pays from MARKET_PRIVATE_KEY: the result on stdout, the receipt on stderr, exactly the price moved', async () => {
    const skill = await world.addSkill({ handler: (input) => ({ upper: String((input as { text: string }).text).toUpperCase() }) });
    const payer = await world.payer();
    const before = await world.chain.balanceOf(skill.payTo);
    const run = await market(['call', skill.slug, '{"text":"bonjour"}', ...paying()], { MARKET_PRIVATE_KEY: payer.privateKey });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ upper: 'BONJOUR' });
    const { receipt } = JSON.parse(run.stderr.trim().split('\n').at(-1)!) as {
      receipt: { transaction: string; amount: string; payer: string };
    };
    expect(receipt).toMatchObject({ amount: '10000', payer: payer.address });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await world.chain.balanceOf(skill.payTo)).toBe(before + 10_000n);
  });

  it('pays from a keystore opened with MARKET_KEYSTORE_PASSPHRASE, in fast mode', async () => {
    const skill = await world.addSkill();
    const payer = await world.payer();
    const keystorePath = join(work, `${payer.address}.json`);
    await writeKeystoreFile(keystorePath, await encryptKeystore(payer.privateKey, 'correct horse battery', { scrypt: { n: 1024 } }));
    const before = await world.chain.balanceOf(payer.address);
    const run = await market(['call', skill.slug, '{"n":1}', '--keystore', keystorePath, '--fast', '--json', ...paying()], {
      MARKET_KEYSTORE_PASSPHRASE: 'correct horse battery',
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('{"echo":{"n":1}}\n');
    expect(await world.chain.balanceOf(payer.address)).toBe(before - 10_000n);
  });

  it('refuses a price above --max-price with exit code 1 and pays nothing', async () => {
    const skill = await world.addSkill();
    const payer = await world.payer();
    const before = await world.chain.balanceOf(payer.address);
    const run = await market(['call', skill.slug, '{}', '--max-price', '$0.001', ...paying()], { SKILLZ_PRIVATE_KEY: payer.privateKey });
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toBe(`market: Refused to pay ${skill.slug}: its price $0.01 is above maxPrice $0.001\n`);
    expect(await world.chain.balanceOf(payer.address)).toBe(before);
  });

  it('explains a missing wallet, input that is not JSON, and a missing slug', async () => {
    const skill = await world.addSkill();
    const noWallet = await market(['call', skill.slug, '{}', ...paying()]);
    expect(noWallet.code).toBe(1);
    expect(noWallet.stderr).toContain('needs a wallet');
    const notJson = await market(['call', skill.slug, '{text: hi}', ...paying()]);
    expect(notJson).toMatchObject({ code: 1 });
    expect(notJson.stderr).toContain('the input is not JSON');
    const usage = await market(['call']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('call needs a skill slug');
  });
});
