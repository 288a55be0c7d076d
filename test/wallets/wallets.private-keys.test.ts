import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { english, generateMnemonic, generatePrivateKey } from 'viem/accounts';
import { looksLikePrivateKey } from 'skill-market/wallet';
import type { DatabaseHandle } from '../../src/db';
import { newWallet, walletSignIn } from '../support/auth';
import { oneDatabase, openTestDatabase, tableNames } from '../support/database';
import { registryWith } from '../support/registry';
import { walletCalls, walletTestConfig } from './helpers';

const REFUSAL = 'Private keys and recovery phrases must never be sent: send only the wallet address';

describe('private-key recognition', () => {
  it('recognises raw keys with or without 0x, alone or inside text', () => {
    const key = generatePrivateKey();
    for (const text of [key, key.slice(2), key.toUpperCase().replace('0X', '0x'), `my key is ${key} ok`])
      expect(looksLikePrivateKey(text)).toBe(true);
  });

  it('recognises 12 to 24 word recovery phrases however they are separated or numbered', () => {
    for (const words of [12, 24]) {
      const phrase = generateMnemonic(english, words === 12 ? 128 : 256);
      expect(looksLikePrivateKey(phrase)).toBe(true);
      expect(looksLikePrivateKey(phrase.toUpperCase())).toBe(true);
      expect(
        looksLikePrivateKey(
          phrase
            .split(' ')
            .map((w, i) => `${i + 1}. ${w}`)
            .join('\n'),
        ),
      ).toBe(true);
      expect(looksLikePrivateKey(phrase.replaceAll(' ', ','))).toBe(true);
    }
  });

  it('lets ordinary labels, addresses, hashes of other lengths and short word lists through', () => {
    for (const text of [
      'laptop',
      'Travel budget 2030',
      newWallet().address,
      'abandon ship and fund the trip',
      'a'.repeat(63),
      'b'.repeat(65),
      `0x${'c'.repeat(130)}`,
    ]) {
      expect(looksLikePrivateKey(text)).toBe(false);
    }
    expect(looksLikePrivateKey(generateMnemonic(english).split(' ').slice(0, 11).join(' '))).toBe(false);
  });
});

for (const kind of oneDatabase) {
  describe(`private keys sent to the wallet endpoints on ${kind}`, () => {
    let database: DatabaseHandle;
    let registry: ReturnType<typeof registryWith>;
    let api: ReturnType<typeof walletCalls>;
    beforeAll(async () => {
      database = await openTestDatabase(kind);
      registry = registryWith(database, await walletTestConfig(undefined, { logLevel: 'debug' }));
      api = walletCalls(registry.request, (await walletSignIn(registry.request)).token);
    });
    afterAll(() => database.close());

    const secrets: string[] = [];
    const key = () => {
      const k = generatePrivateKey();
      secrets.push(k.slice(2));
      return k;
    };
    const phrase = () => {
      const p = generateMnemonic(english);
      secrets.push(p, p.split(' ').slice(4, 8).join(' '));
      return p;
    };

    const expectRefused = async (res: { status: number; body: any; text: string }, field: string) => {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: REFUSAL, code: 'VALIDATION', details: [{ field }] });
      for (const secret of secrets) expect(res.text).not.toContain(secret);
    };

    it('refuses a key or a phrase in place of the address', async () => {
      await expectRefused(await api.register(key()), 'address');
      await expectRefused(await api.register(key().slice(2)), 'address');
      await expectRefused(await api.register(phrase()), 'address');
    });

    it('refuses a key or a phrase in the label, on registration and on update', async () => {
      const address = newWallet().address;
      await expectRefused(await api.register(address, key()), 'label');
      await expectRefused(await api.register(address, phrase()), 'label');
      expect((await api.register(address, 'fine')).status).toBe(201);
      await expectRefused(await api.label(address, `backup ${key()}`), 'label');
      await expectRefused(await api.label(address, phrase()), 'label');
      expect((await api.active()).body.label).toBe('fine');
    });

    it('refuses a key in any extra or nested field, and in the query', async () => {
      const address = newWallet().address;
      await expectRefused(await api.call('POST', '/wallet/generate', { address, privateKey: key() }), 'privateKey');
      await expectRefused(await api.call('POST', '/wallet/generate', { address, meta: { seed: [phrase()] } }), 'meta.seed.0');
      await expectRefused(await api.call('GET', `/wallet/all?key=${key()}`), 'query.key');
      expect((await api.all()).body.map((w: any) => w.address)).not.toContain(address);
    });

    it('refuses a key given in place of the address in the path', async () => {
      // The access log records paths, so this case is kept out of the log check below.
      const res = await api.call('DELETE', `/wallet/${generatePrivateKey()}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(REFUSAL);
    });

    it('refuses a key given in place of the address when reading one wallet, and keeps it out of the log', async () => {
      for (const path of [key(), key().slice(2)]) {
        const res = await api.one(path);
        expect(res.status).toBe(400);
        expect(res.body.error).toBe(REFUSAL);
        for (const secret of secrets) expect(res.text).not.toContain(secret);
      }
    });

    it('never writes a refused key or phrase to the logs or the database', async () => {
      expect(secrets.length).toBeGreaterThan(10);
      await registry.settled(); // every request's access-log line is written
      const logs = JSON.stringify(registry.logs);
      expect(registry.logs.filter((l) => l.msg === 'request').length).toBeGreaterThan(10);
      let dump = '';
      for (const table of await tableNames(database)) {
        const result = await database.db.execute(sql.raw(`select * from "${table}"`));
        dump += JSON.stringify(Array.isArray(result) ? result : (result as any).rows);
      }
      expect(dump).toContain('fine');
      for (const secret of secrets) {
        expect(logs.toLowerCase()).not.toContain(secret.toLowerCase());
        expect(dump.toLowerCase()).not.toContain(secret.toLowerCase());
      }
    });
  });
}
