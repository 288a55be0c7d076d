import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { DatabaseHandle } from '../../src/db';
import { bearer, createKey, newWallet, sameOrigin, walletSignIn } from '../support/auth';
import { databaseKinds, openTestDatabase } from '../support/database';
import { manualClock, registryWith } from '../support/registry';
import { walletCalls, walletTestConfig } from './helpers';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

for (const kind of databaseKinds) {
  describe(`spending wallet endpoints on ${kind}`, () => {
    let database: DatabaseHandle;
    let registry: ReturnType<typeof registryWith>;
    const clock = manualClock(new Date('2030-01-01T00:00:00.000Z'));
    beforeAll(async () => {
      database = await openTestDatabase(kind);
      registry = registryWith(database, await walletTestConfig(), clock);
    });
    afterAll(() => database.close());

    const signedIn = async () => walletCalls(registry.request, (await walletSignIn(registry.request)).token);

    it('registers an address given in lower case, stores it checksummed, answers 201 with the record', async () => {
      const api = await signedIn();
      const address = newWallet().address;
      const res = await api.register(address.toLowerCase(), 'laptop');
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(['address', 'createdAt', 'id', 'isActive', 'label', 'lastUsedAt', 'revokedAt']);
      expect(res.body).toMatchObject({ address, label: 'laptop', isActive: true, lastUsedAt: null, revokedAt: null });
      expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.body.createdAt).toBe(clock.now().toISOString());
    });

    it('is idempotent for your own address: 200, same record, label kept unless a new one is given', async () => {
      const api = await signedIn();
      const address = newWallet().address;
      const first = await api.register(address, 'one');
      const again = await api.register(address.toLowerCase());
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      const relabelled = await api.register(address, 'two');
      expect(relabelled.body).toMatchObject({ id: first.body.id, label: 'two' });
      expect((await api.all()).body).toHaveLength(1);
    });

    it('answers 400 Address already registered for an address another user holds, in any case', async () => {
      const owner = await signedIn();
      const other = await signedIn();
      const address = newWallet().address;
      await owner.register(address);
      for (const variant of [address, address.toLowerCase(), `0x${address.slice(2).toUpperCase()}`]) {
        const res = await other.register(variant);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ error: 'Address already registered', code: 'VALIDATION' });
        expect(res.body.requestId).toBe(res.headers.get('x-request-id'));
      }
      expect((await other.all()).body).toEqual([]);
      expect((await owner.active()).body.address).toBe(address);
    });

    it('lets exactly one of two users win a race for the same address', async () => {
      const [a, b] = await Promise.all([signedIn(), signedIn()]);
      const address = newWallet().address;
      const results = await Promise.all([a.register(address), b.register(address)]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 400]);
    });

    it('makes a new wallet the active one, and re-registering an older one switches back', async () => {
      const api = await signedIn();
      const [first, second] = [newWallet().address, newWallet().address];
      await api.register(first, 'first');
      clock.advance(1);
      await api.register(second, 'second');
      expect((await api.active()).body).toMatchObject({ address: second, isActive: true });
      const all = (await api.all()).body;
      expect(all.map((w: any) => [w.address, w.isActive])).toEqual([
        [second, true],
        [first, false],
      ]);
      await api.register(first);
      expect((await api.active()).body.address).toBe(first);
      expect((await api.all()).body.filter((w: any) => w.isActive)).toHaveLength(1);
    });

    it('keeps one active wallet under concurrent registrations by one user', async () => {
      const api = await signedIn();
      await Promise.all(Array.from({ length: 5 }, () => api.register(newWallet().address)));
      const all = (await api.all()).body;
      expect(all).toHaveLength(5);
      expect(all.filter((w: any) => w.isActive)).toHaveLength(1);
    });

    it('answers the JSON literal null from GET /wallet when there is no active wallet', async () => {
      const api = await signedIn();
      const res = await api.active();
      expect(res.status).toBe(200);
      expect(res.text).toBe('null');
      expect(res.headers.get('content-type')).toContain('application/json');
    });

    it('answers GET /wallet with the record and the balance fields', async () => {
      const api = await signedIn();
      const address = newWallet().address;
      await api.register(address, 'main');
      const res = await api.active();
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        address,
        label: 'main',
        isActive: true,
        revokedAt: null,
        network: 'eip155:8453',
        asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      });
      // The test chain's RPC is unreachable on purpose: the record still comes back.
      expect(res.body).toMatchObject({
        balance: null,
        balanceAtomic: null,
        balanceCheckedAt: null,
        balanceError: 'The RPC could not be reached',
      });
    });

    it('revokes softly: revokedAt set, no longer active, still listed, idempotent', async () => {
      const api = await signedIn();
      const address = newWallet().address;
      await api.register(address, 'old');
      clock.advance(60);
      const revokedAt = clock.now().toISOString();
      const res = await api.revoke(address.toLowerCase());
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: true, wallet: { address, isActive: false, revokedAt, label: 'old' } });
      expect((await api.active()).body).toBeNull();
      const listed = (await api.all()).body;
      expect(listed).toEqual([expect.objectContaining({ address, revokedAt, isActive: false })]);
      clock.advance(60);
      expect((await api.revoke(address)).body.wallet.revokedAt).toBe(revokedAt);
    });

    it('leaves the active wallet alone when another one is revoked', async () => {
      const api = await signedIn();
      const [old, current] = [newWallet().address, newWallet().address];
      await api.register(old);
      await api.register(current);
      await api.revoke(old);
      expect((await api.active()).body.address).toBe(current);
    });

    it('reactivates a revoked wallet of yours when it is registered again', async () => {
      const api = await signedIn();
      const address = newWallet().address;
      await api.register(address);
      await api.revoke(address);
      const res = await api.register(address);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ isActive: true, revokedAt: null });
    });

    it('sets, trims and removes labels; null removes; the address is matched in any case', async () => {
      const api = await signedIn();
      const address = newWallet().address;
      await api.register(address);
      expect((await api.label(address.toLowerCase(), '  travel  ')).body).toMatchObject({ address, label: 'travel' });
      expect((await api.all()).body[0].label).toBe('travel');
      expect((await api.label(address, null)).body.label).toBeNull();
      expect((await api.label(address, 'x'.repeat(64))).status).toBe(200);
    });

    it('refuses labels that are too long or not plain text', async () => {
      const api = await signedIn();
      const address = newWallet().address;
      for (const label of ['x'.repeat(65), 'bad\u0000label', 'line\nbreak', 'spoof\u202Etxt']) {
        const res = await api.label(address, label);
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('VALIDATION');
        expect(res.body.error).toContain('label');
      }
      const res = await api.register(address, 'y'.repeat(65));
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('label');
    });

    it('answers 404 Wallet not found for unknown, malformed and other users’ addresses, changing nothing', async () => {
      const owner = await signedIn();
      const stranger = await signedIn();
      const address = newWallet().address;
      await owner.register(address, 'mine');
      for (const target of [address, newWallet().address, '0x1234']) {
        for (const res of [await stranger.label(target, 'theirs'), await stranger.revoke(target)]) {
          expect(res.status).toBe(404);
          expect(res.body).toMatchObject({ error: 'Wallet not found', code: 'NOT_FOUND' });
        }
      }
      expect((await owner.active()).body).toMatchObject({ address, label: 'mine', revokedAt: null });
    });

    it('refuses a malformed address and a mixed-case address with a wrong checksum', async () => {
      const api = await signedIn();
      for (const address of ['0x1234', 'not an address', newWallet().address.slice(0, 41)]) {
        const res = await api.register(address);
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('VALIDATION');
      }
      const good = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
      const typo = '0x833589FCD6eDb6E08f4c7C32D4f71b54bdA02913';
      const res = await api.register(typo);
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('checksum');
      expect((await api.register(good.toUpperCase().replace('0X', '0x'))).status).toBe(201);
    });

    it('accepts a consumer API key on every wallet route', async () => {
      const session = await walletSignIn(registry.request);
      const key = await createKey(registry.request, session.token, 'consumer');
      const api = walletCalls(registry.request, key.key);
      const address = newWallet().address;
      expect((await api.register(address)).status).toBe(201);
      expect((await api.active()).status).toBe(200);
      expect((await api.all()).status).toBe(200);
      expect((await api.label(address, 'k')).status).toBe(200);
      expect((await api.revoke(address)).status).toBe(200);
    });

    const routes: [string, string, unknown?][] = [
      ['POST', '/wallet/generate', { address: newWallet().address }],
      ['GET', '/wallet'],
      ['GET', '/wallet/all'],
      ['PATCH', `/wallet/${newWallet().address}`, { label: 'x' }],
      ['DELETE', `/wallet/${newWallet().address}`],
    ];
    for (const [method, path, body] of routes) {
      it(`answers ${method} ${path.replace(/0x\w+/, ':address')} with 401 without or with a bad credential`, async () => {
        const send = (headers: Record<string, string>) =>
          registry.request(path, {
            method,
            headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
            ...(body ? { body: JSON.stringify(body) } : {}),
          });
        const missing = await send({});
        expect(missing.status).toBe(401);
        expect(await missing.json()).toMatchObject({ error: 'Authentication required', code: 'UNAUTHORIZED' });
        for (const headers of [bearer('garbage'), bearer(`ck_${'A'.repeat(43)}`), { cookie: 'market_token=a.b.c', ...sameOrigin }]) {
          const res = await send(headers);
          expect(res.status).toBe(401);
          expect(((await res.json()) as any).error).toBe('Invalid token');
        }
      });
    }

    it('lists wallets newest first with ISO timestamps', async () => {
      const api = await signedIn();
      const addresses = [newWallet().address, newWallet().address, newWallet().address];
      for (const address of addresses) {
        await api.register(address);
        clock.advance(1);
      }
      const all = (await api.all()).body;
      expect(all.map((w: any) => w.address)).toEqual([...addresses].reverse());
      for (const w of all) expect(w.createdAt).toMatch(ISO);
    });
  });
}
