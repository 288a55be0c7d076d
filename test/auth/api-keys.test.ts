import { describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { bearer, createKey, jsonPost, walletSignIn } from '../support/auth';
import { oneDatabase } from '../support/database';
import { registryFixture } from '../support/registry';

for (const kind of oneDatabase) {
  describe(`API keys on ${kind}`, () => {
    const fx = registryFixture(kind);

    const list = async (token: string) => (await (await fx.request('/auth/api-keys', { headers: bearer(token) })).json()) as any[];

    it('shows a creator key once, sk_ with 32 random bytes, and lists it without the secret', async () => {
      const { token } = await walletSignIn(fx.request);
      const res = await fx.request('/auth/api-keys', jsonPost({ name: 'ci', type: 'creator' }, bearer(token)));
      expect(res.status).toBe(201);
      const created = (await res.json()) as any;
      expect(created.key).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
      expect(created.keyPrefix).toBe(created.key.slice(0, 11));
      expect(created).toMatchObject({ name: 'ci', type: 'creator', revokedAt: null, lastUsedAt: null });
      const listed = await list(token);
      expect(listed).toHaveLength(1);
      expect(Object.keys(listed[0]).sort()).toEqual(['createdAt', 'id', 'keyPrefix', 'lastUsedAt', 'name', 'revokedAt', 'type']);
      expect(JSON.stringify(listed)).not.toContain(created.key);
    });

    it('makes ck_ consumer keys and defaults to a creator key', async () => {
      const { token } = await walletSignIn(fx.request);
      expect((await createKey(fx.request, token, 'consumer')).key).toStartWith('ck_');
      const res = await fx.request('/auth/api-keys', jsonPost({ name: 'default' }, bearer(token)));
      expect(((await res.json()) as any).key).toStartWith('sk_');
    });

    it('stores only a hash of the key', async () => {
      const { token } = await walletSignIn(fx.request);
      const { key, id } = await createKey(fx.request, token);
      const result = await fx.database.db.execute(sql`select * from api_keys where id = ${id}`);
      const rows = Array.isArray(result) ? result : (result as any).rows;
      expect(JSON.stringify(rows)).not.toContain(key);
      expect(JSON.stringify(rows)).not.toContain(key.slice(11));
    });

    it('authenticates with the key and records lastUsedAt, at most once a minute', async () => {
      const { token } = await walletSignIn(fx.request);
      const { key, id } = await createKey(fx.request, token);
      expect((await fx.request('/creators/me', { headers: bearer(key) })).status).toBe(200);
      await fx.settled();
      const first = (await list(token)).find((k) => k.id === id).lastUsedAt;
      expect(first).toBe(fx.clock.now().toISOString());
      fx.clock.advance(10);
      await fx.request('/creators/me', { headers: bearer(key) });
      await fx.settled();
      expect((await list(token)).find((k) => k.id === id).lastUsedAt).toBe(first);
      fx.clock.advance(60);
      await fx.request('/creators/me', { headers: bearer(key) });
      await fx.settled();
      expect((await list(token)).find((k) => k.id === id).lastUsedAt).toBe(fx.clock.now().toISOString());
    });

    it('answers 403 API key revoked on the next request after DELETE', async () => {
      const { token } = await walletSignIn(fx.request);
      const { key, id } = await createKey(fx.request, token);
      const del = await fx.request(`/auth/api-keys/${id}`, { method: 'DELETE', headers: bearer(token) });
      expect(del.status).toBe(200);
      expect(await del.json()).toEqual({ success: true });
      const res = await fx.request('/creators/me', { headers: bearer(key) });
      expect(res.status).toBe(403);
      expect(((await res.json()) as any).error).toBe('API key revoked');
      expect((await list(token)).find((k) => k.id === id).revokedAt).not.toBeNull();
    });

    it("answers 404 when revoking another user's key, which keeps working", async () => {
      const alice = await walletSignIn(fx.request);
      const bob = await walletSignIn(fx.request);
      const { key, id } = await createKey(fx.request, alice.token);
      const res = await fx.request(`/auth/api-keys/${id}`, { method: 'DELETE', headers: bearer(bob.token) });
      expect(res.status).toBe(404);
      expect((await fx.request('/creators/me', { headers: bearer(key) })).status).toBe(200);
    });

    it('answers 400 naming the field for a bad name or type', async () => {
      const { token } = await walletSignIn(fx.request);
      const bad = await fx.request('/auth/api-keys', jsonPost({ name: '', type: 'creator' }, bearer(token)));
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as any).error).toContain('"name"');
      const badType = await fx.request('/auth/api-keys', jsonPost({ name: 'x', type: 'admin' }, bearer(token)));
      expect(badType.status).toBe(400);
    });

    it('does not let an API key create or list keys (a session is required)', async () => {
      const { token } = await walletSignIn(fx.request);
      const { key } = await createKey(fx.request, token);
      expect((await fx.request('/auth/api-keys', jsonPost({ name: 'x' }, bearer(key)))).status).toBe(403);
      expect((await fx.request('/auth/api-keys', { headers: bearer(key) })).status).toBe(403);
    });
  });
}
