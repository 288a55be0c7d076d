import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { verifyMessage } from 'viem';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createSpendingWallet,
  decryptKeystore,
  KeystoreError,
  loadSpendingWallet,
  readKeystoreFile,
  walletApi,
  WalletRegistrationError,
} from 'skill-market/wallet';
import type { DatabaseHandle } from '../../src/db';
import { wallets } from '../../src/db/schema';
import { createKey, walletSignIn } from '../support/auth';
import { oneDatabase, openTestDatabase, tableNames } from '../support/database';
import { registryWith } from '../support/registry';
import { walletTestConfig } from './helpers';

const work = mkdtempSync(join(tmpdir(), 'market-spending-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const FAST = { scrypt: { n: 1024 } };

for (const kind of oneDatabase) {
  describe(`createSpendingWallet against an in-process registry on ${kind}`, () => {
    let database: DatabaseHandle;
    let registry: ReturnType<typeof registryWith>;
    let apiKey: string;
    const sent: string[] = [];
    const fetchRegistry = (async (input: string | URL | Request, init?: RequestInit) => {
      const request = new Request(input as string, init);
      sent.push(`${request.method} ${request.url} ${await request.clone().text()}`);
      return registry.app.handle(request);
    }) as typeof fetch;
    beforeAll(async () => {
      database = await openTestDatabase(kind);
      registry = registryWith(database, await walletTestConfig());
      apiKey = (await createKey(registry.request, (await walletSignIn(registry.request)).token, 'consumer')).key;
    });
    afterAll(() => database.close());

    it('keeps the key in a 0600 keystore, registers only the address, and loads back as a viem account', async () => {
      const created = await createSpendingWallet({
        apiUrl: 'http://registry.test/',
        apiKey,
        fetch: fetchRegistry,
        passphrase: 'correct horse battery',
        keystorePath: (address) => join(work, kind, `${address}.json`),
        label: 'agent',
        keystore: FAST,
      });
      expect(created.keystorePath).toBe(join(work, kind, `${created.address}.json`));
      expect(statSync(created.keystorePath).mode & 0o777).toBe(0o600);
      expect(created.wallet).toMatchObject({ address: created.address, label: 'agent', isActive: true });

      const account = await loadSpendingWallet({ keystorePath: created.keystorePath, passphrase: 'correct horse battery' });
      expect(account.address).toBe(created.address);
      await expect(loadSpendingWallet({ keystorePath: created.keystorePath, passphrase: 'wrong horse battery' })).rejects.toBeInstanceOf(
        KeystoreError,
      );

      const key = (await decryptKeystore(await readKeystoreFile(created.keystorePath), 'correct horse battery')).slice(2);
      expect(sent.join('\n')).not.toContain(key);
      // The registry's message, signed by the new key: the wallet is proven (a signature, never the key).
      const posts = sent.filter((s) => s.startsWith('POST'));
      expect(posts).toHaveLength(2);
      expect(posts[0]).toBe(`POST http://registry.test/wallet/challenge ${JSON.stringify({ address: created.address })}`);
      const registered = JSON.parse(posts[1]!.slice('POST http://registry.test/wallet/generate '.length));
      expect(registered).toMatchObject({ address: created.address, label: 'agent' });
      expect(await verifyMessage({ address: created.address, ...registered.proof })).toBe(true);
      const [stored] = await database.db.select().from(wallets).where(eq(wallets.address, created.address));
      expect(stored?.provenAt).toBeInstanceOf(Date);
      let dump = '';
      for (const table of await tableNames(database))
        dump += JSON.stringify(await database.db.execute(sql.raw(`select * from "${table}"`)));
      expect(dump).toContain(created.address);
      expect(dump.toLowerCase()).not.toContain(key);

      const api = walletApi({ apiUrl: 'http://registry.test', apiKey, fetch: fetchRegistry });
      expect((await api.active())?.address).toBe(created.address);
      expect((await api.setLabel(created.address, null)).label).toBeNull();
      expect((await api.revoke(created.address)).revokedAt).not.toBeNull();
      expect(await api.active()).toBeNull();
      expect((await api.list()).map((w) => w.address)).toContain(created.address);
    });

    it('keeps the keystore when the registry refuses, and says where it is', async () => {
      const error = await createSpendingWallet({
        apiUrl: 'http://registry.test',
        apiKey: `ck_${'A'.repeat(43)}`,
        fetch: fetchRegistry,
        passphrase: 'another passphrase',
        keystorePath: (address) => join(work, kind, 'refused', `${address}.json`),
        keystore: FAST,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WalletRegistrationError);
      const { keystorePath, message } = error as WalletRegistrationError;
      expect(existsSync(keystorePath)).toBe(true);
      expect(message).toContain('Invalid token');
      expect((await loadSpendingWallet({ keystorePath, passphrase: 'another passphrase' })).address).toBe(
        (error as WalletRegistrationError).address,
      );
    });

    it('refuses a short passphrase and never sends key material through the client', async () => {
      await expect(
        createSpendingWallet({
          apiUrl: 'http://registry.test',
          apiKey,
          fetch: fetchRegistry,
          passphrase: 'short',
          keystorePath: join(work, 'x.json'),
        }),
      ).rejects.toThrow('at least 8');
      const api = walletApi({ apiUrl: 'http://registry.test', apiKey, fetch: fetchRegistry });
      const before = sent.length;
      const key = `0x${'ab'.repeat(32)}`;
      await expect(api.register(key)).rejects.toThrow('must never be sent');
      await expect(api.revoke(key)).rejects.toThrow('must never be sent');
      await expect(api.register(`0x${'1'.repeat(40)}`, key)).rejects.toThrow('must never be sent');
      expect(sent.length).toBe(before);
    });
  });
}
