import { describe, expect, it } from 'bun:test';
import { bearer, walletSignIn } from '../support/auth';
import { oneDatabase } from '../support/database';
import { registryFixture } from '../support/registry';

for (const kind of oneDatabase) {
  describe(`creator profiles on ${kind}`, () => {
    const fx = registryFixture(kind);

    const patch = (token: string, body: unknown) =>
      fx.request('/creators/me', {
        method: 'PATCH',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    it('lets a user edit name, avatar and bio, shown publicly by address in any case', async () => {
      const { token, wallet } = await walletSignIn(fx.request);
      const res = await patch(token, { name: 'Ada', avatar: 'https://img.test/a.png', bio: 'Builds skills' });
      expect(res.status).toBe(200);
      const pub = await fx.request(`/creators/${wallet.address.toLowerCase()}`);
      expect(pub.status).toBe(200);
      expect(await pub.json()).toMatchObject({
        walletAddress: wallet.address,
        name: 'Ada',
        avatar: 'https://img.test/a.png',
        bio: 'Builds skills',
      });
    });

    it('clears a field with null and leaves the others', async () => {
      const { token, wallet } = await walletSignIn(fx.request);
      await patch(token, { name: 'Bo', bio: 'x' });
      await patch(token, { bio: null });
      expect(await (await fx.request(`/creators/${wallet.address}`)).json()).toMatchObject({ name: 'Bo', bio: null });
    });

    it('ignores fields that are not profile fields, such as the wallet address', async () => {
      const { token, wallet } = await walletSignIn(fx.request);
      const res = await patch(token, { walletAddress: '0x0000000000000000000000000000000000000001', name: 'Cy' });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ walletAddress: wallet.address, name: 'Cy' });
    });

    it('refuses a non-http avatar and an over-long bio, naming the field', async () => {
      const { token } = await walletSignIn(fx.request);
      for (const [body, field] of [
        [{ avatar: 'javascript:alert(1)' }, 'avatar'],
        [{ bio: 'x'.repeat(1001) }, 'bio'],
      ] as const) {
        const res = await patch(token, body);
        expect(res.status).toBe(400);
        expect(((await res.json()) as any).error).toContain(field);
      }
    });

    it('answers 404 for an unknown creator and 400 for a malformed address', async () => {
      expect((await fx.request('/creators/0x000000000000000000000000000000000000dEaD')).status).toBe(404);
      expect((await fx.request('/creators/not-an-address')).status).toBe(400);
    });
  });
}
