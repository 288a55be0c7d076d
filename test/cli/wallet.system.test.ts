import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'bun';
import { decryptKeystore, loadSpendingWallet } from 'skill-market/wallet';
import type { DatabaseHandle } from '../../src/db';
import { createKey, walletSignIn } from '../support/auth';
import { startChain, type LocalChain } from '../support/chain';
import { openTestDatabase, tableNames } from '../support/database';
import { freePort, spawnMarket } from '../support/process';
import { registryWith } from '../support/registry';
import { offlineChain, walletTestConfig } from '../wallets/helpers';

const work = mkdtempSync(join(tmpdir(), 'market-cli-wallet-'));
const PASSPHRASE = 'cli test passphrase';

describe('market login and market wallet against a registry', () => {
  let database: DatabaseHandle;
  let chain: LocalChain;
  let server: Server<undefined>;
  let registry: ReturnType<typeof registryWith>;
  let apiUrl: string;
  let apiKey: string;
  const home = join(work, 'home');
  const config = join(work, 'xdg');

  beforeAll(async () => {
    [database, chain] = await Promise.all([openTestDatabase('embedded'), startChain({ payers: 1, payees: 1 })]);
    const walletChain = offlineChain({ network: chain.network, usdcAddress: chain.token.address, rpcUrl: chain.rpcUrl, balanceCacheMs: 0 });
    registry = registryWith(database, await walletTestConfig(walletChain));
    server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => registry.app.handle(request) });
    apiUrl = `http://127.0.0.1:${server.port}`;
    apiKey = (await createKey(registry.request, (await walletSignIn(registry.request)).token, 'consumer')).key;
  }, 60_000);
  afterAll(async () => {
    await server.stop(true);
    await chain.stop();
    await database.close();
    rmSync(work, { recursive: true, force: true });
  });

  async function market(args: string[], env: Record<string, string> = {}) {
    const child = spawnMarket(args, { HOME: home, XDG_CONFIG_HOME: config, ...env }, work);
    const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    return { code, stdout, stderr };
  }
  const withPassphrase = { MARKET_KEYSTORE_PASSPHRASE: PASSPHRASE };
  let first: string;
  let second: string;

  it('refuses wallet commands before login, naming what to do', async () => {
    const res = await market(['wallet', 'list']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('not logged in: run `market login --api-key <key>` or set MARKET_API_KEY');
  });

  it('refuses a key the registry does not know, and stores nothing', async () => {
    const res = await market(['login', '--api-key', `ck_${'A'.repeat(43)}`, '--api-url', apiUrl]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('refused this key: Invalid token');
    expect(() => statSync(join(config, 'skill-market', 'config.json'))).toThrow();
  });

  it('logs in: checks the key and stores URL and key in a 0600 file under XDG_CONFIG_HOME', async () => {
    const res = await market(['login', '--api-key', apiKey, '--api-url', apiUrl]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const file = join(config, 'skill-market', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ apiUrl, apiKey });
    expect(res.stdout).not.toContain(apiKey);
  });

  it('creates a wallet: key encrypted in a 0600 keystore in the config folder, address registered and active', async () => {
    const res = await market(['wallet', 'new', '--label', 'agent'], withPassphrase);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    first = /Created spending wallet (0x[0-9a-fA-F]{40})/.exec(res.stdout)![1]!;
    const keystorePath = join(config, 'skill-market', 'wallets', `${first}.json`);
    expect(res.stdout).toContain(`Keystore: ${keystorePath}`);
    expect(statSync(keystorePath).mode & 0o777).toBe(0o600);
    expect((await loadSpendingWallet({ keystorePath, passphrase: PASSPHRASE })).address).toBe(first as `0x${string}`);
    await expect(loadSpendingWallet({ keystorePath, passphrase: 'wrong' })).rejects.toThrow('Wrong passphrase');

    const key = (await decryptKeystore(JSON.parse(readFileSync(keystorePath, 'utf8')), PASSPHRASE)).slice(2);
    let dump = '';
    for (const table of await tableNames(database)) dump += JSON.stringify(await database.db.execute(sql.raw(`select * from "${table}"`)));
    expect(dump).toContain(first);
    expect(dump.toLowerCase()).not.toContain(key);
    expect(JSON.stringify(registry.logs).toLowerCase()).not.toContain(key);
  });

  it('shows the live balance of the active wallet once it is funded on the chain', async () => {
    expect((await market(['wallet', 'balance'])).stdout).toContain(`${first} (agent): 0.000000 USDC on ${chain.network}`);
    await chain.mint(first as `0x${string}`, 2_500_000n);
    const res = await market(['wallet', 'balance']);
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toBe(`${first} (agent): 2.500000 USDC on ${chain.network}`);
    const json = JSON.parse((await market(['wallet', 'balance', '--json'])).stdout);
    expect(json).toMatchObject({ address: first, balance: '2.500000', balanceAtomic: '2500000' });
  });

  it('switches the active wallet to a new one kept at --keystore, and lists both', async () => {
    const keystorePath = join(work, 'elsewhere', 'second.json');
    const res = await market(['wallet', 'new', '--keystore', keystorePath], withPassphrase);
    expect(res.code).toBe(0);
    second = /Created spending wallet (0x[0-9a-fA-F]{40})/.exec(res.stdout)![1]!;
    expect(statSync(keystorePath).mode & 0o777).toBe(0o600);
    const listed = await market(['wallet', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split('\n')).toEqual([`${second}  active`, `${first}  inactive  agent`]);
  });

  it('labels and revokes: the revoked wallet stays listed with its revocation time', async () => {
    expect((await market(['wallet', 'label', second, 'spare'])).stdout).toContain(`${second}  active    spare`);
    const res = await market(['wallet', 'revoke', second.toLowerCase()]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`Revoked ${second}`);
    const listed = JSON.parse((await market(['wallet', 'list', '--json'])).stdout);
    expect(listed.find((w: any) => w.address === second)).toMatchObject({ isActive: false, revokedAt: expect.any(String), label: 'spare' });
    const balance = await market(['wallet', 'balance']);
    expect(balance.code).toBe(1);
    expect(balance.stderr).toContain('no active spending wallet');
  });

  it('reports registry errors and refuses key material without sending it', async () => {
    const unknown = await market(['wallet', 'revoke', `0x${'1'.repeat(40)}`]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('market: Wallet not found (HTTP 404)\n');
    const requests = registry.logs.filter((l) => l.msg === 'request').length;
    const key = await market(['wallet', 'revoke', `0x${'ab'.repeat(32)}`]);
    expect(key.code).toBe(1);
    expect(key.stderr).toContain('must never be sent');
    const label = await market(['wallet', 'new', '--label', 'ab'.repeat(32)], withPassphrase);
    expect(label.code).toBe(1);
    expect(label.stderr).toContain('must never be sent');
    expect(registry.logs.filter((l) => l.msg === 'request').length).toBe(requests);
  });

  it('needs a passphrase and never writes a keystore without one', async () => {
    const res = await market(['wallet', 'new', '--keystore', join(work, 'none.json')]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('set MARKET_KEYSTORE_PASSPHRASE');
    expect(() => statSync(join(work, 'none.json'))).toThrow();
  });

  it('prefers MARKET_API_URL and MARKET_API_KEY over the stored login, and says when the registry is down', async () => {
    const bad = await market(['wallet', 'list'], { MARKET_API_KEY: `ck_${'B'.repeat(43)}` });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Invalid token (HTTP 401)');
    const down = `http://127.0.0.1:${await freePort()}`;
    const res = await market(['wallet', 'list'], { MARKET_API_URL: down });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`The registry at ${down} could not be reached`);
  });

  it('exits 2 with usage on an unknown or incomplete wallet command', async () => {
    for (const args of [['wallet'], ['wallet', 'frobnicate'], ['wallet', 'revoke'], ['login']]) {
      const res = await market(args);
      expect(res.code).toBe(2);
      expect(res.stderr).toContain('Usage:');
    }
  });
});
