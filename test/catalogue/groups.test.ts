import { describe, expect, it } from 'bun:test';
import { bearer, createKey, jsonPost } from '../support/auth';
import { registryFixture } from '../support/registry';
import { json, newCreator } from '../support/catalogue';
import { oneDatabase } from '../support/database';

for (const kind of oneDatabase) {
  describe(`groups on ${kind}`, () => {
    const fx = registryFixture(kind);
    const send = (method: string, path: string, key: string, body?: unknown) =>
      fx.request(path, {
        method,
        headers: { ...bearer(key), 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });

    it('creates a group: 201 with id, slug and name', async () => {
      const creator = await newCreator(fx.request);
      const res = await fx.request(
        '/groups',
        jsonPost({ name: 'Weather Tools', description: 'Forecasts', icon: '⛅' }, bearer(creator.key)),
      );
      expect(res.status).toBe(201);
      expect(await json(res)).toMatchObject({
        slug: 'weather-tools',
        name: 'Weather Tools',
        description: 'Forecasts',
        icon: '⛅',
        creatorId: creator.userId,
        isActive: true,
      });
    });

    it('gives a second creator with the same group name another slug', async () => {
      const a = await newCreator(fx.request);
      const b = await newCreator(fx.request);
      const first = await json(await fx.request('/groups', jsonPost({ name: 'Same Name' }, bearer(a.key))));
      const second = await json(await fx.request('/groups', jsonPost({ name: 'Same Name' }, bearer(b.key))));
      expect(second.slug).not.toBe(first.slug);
      expect(second.slug).toStartWith('same-name-');
    });

    it('answers 409 for a name the creator already uses, whatever the case', async () => {
      const creator = await newCreator(fx.request);
      await creator.group('Translate');
      const res = await fx.request('/groups', jsonPost({ name: 'translate' }, bearer(creator.key)));
      expect(res.status).toBe(409);
      expect((await json(res)).error).toBe('You already have a group named "translate"');
    });

    it('lists groups publicly, all or by creator address', async () => {
      const creator = await newCreator(fx.request);
      await creator.group('alpha');
      await creator.group('beta');
      const mine = await json<any[]>(await fx.request(`/groups?creator=${creator.address.toLowerCase()}`));
      expect(mine.map((g) => g.name)).toEqual(['alpha', 'beta']);
      expect((await json<any[]>(await fx.request('/groups'))).length).toBeGreaterThanOrEqual(2);
    });

    it('shows a group with its active skills only', async () => {
      const creator = await newCreator(fx.request);
      const group = await creator.group('showcase');
      const on = await json(await creator.register({ name: 'visible', groups: ['showcase'] }));
      const off = await json(await creator.register({ name: 'hidden', groups: ['showcase'] }));
      await send('PATCH', `/skills/${off.slug}`, creator.key, { isActive: false });
      const res = await json(await fx.request(`/groups/${group.slug}`));
      expect(res.skills.map((s: any) => s.slug)).toEqual([on.slug]);
      expect((await fx.request(`/groups/${group.slug}?creator=0x000000000000000000000000000000000000dEaD`)).status).toBe(404);
      expect((await fx.request(`/groups/${group.slug}?creator=${creator.address}`)).status).toBe(200);
    });

    it('shows a group with its creator’s public profile, as existing clients read it', async () => {
      const creator = await newCreator(fx.request);
      await send('PATCH', '/creators/me', creator.token, { name: 'Ada', bio: 'Makes tools' });
      const group = await creator.group('profiled');
      const res = await json(await fx.request(`/groups/${group.slug}`));
      expect(res.creator).toEqual({
        id: creator.userId,
        walletAddress: creator.address,
        name: 'Ada',
        avatar: null,
        bio: 'Makes tools',
        createdAt: expect.any(String),
      });
      expect(res.creator).toEqual(
        await json(await fx.request(`/creators/${creator.address}`)).then(({ skills: _skills, ...profile }: any) => profile),
      );
    });

    it('renames, describes and sets the icon of the owner’s group; others get 403, unknown 404', async () => {
      const creator = await newCreator(fx.request);
      const group = await creator.group('old');
      const res = await send('PATCH', `/groups/${group.slug}`, creator.key, {
        name: 'new',
        description: 'd',
        icon: 'https://img.test/i.png',
      });
      expect(res.status).toBe(200);
      expect(await json(res)).toMatchObject({ name: 'new', description: 'd', icon: 'https://img.test/i.png', slug: group.slug });
      const other = await newCreator(fx.request);
      expect((await send('PATCH', `/groups/${group.slug}`, other.key, { name: 'mine' })).status).toBe(403);
      expect((await send('PATCH', '/groups/no-such-group', creator.key, { name: 'x' })).status).toBe(404);
    });

    it('refuses an icon that is neither an emoji nor a URL', async () => {
      const creator = await newCreator(fx.request);
      const res = await fx.request('/groups', jsonPost({ name: 'iconic', icon: 'not an icon at all' }, bearer(creator.key)));
      expect(res.status).toBe(400);
      expect((await json(res)).error).toContain('icon');
    });

    it('deletes an unused group and answers 409 while a skill uses it', async () => {
      const creator = await newCreator(fx.request);
      const unused = await creator.group('unused');
      expect((await send('DELETE', `/groups/${unused.slug}`, creator.key)).status).toBe(200);
      expect((await fx.request(`/groups/${unused.slug}`)).status).toBe(404);
      const used = await creator.group('used');
      await creator.register({ groups: ['used'] });
      const res = await send('DELETE', `/groups/${used.slug}`, creator.key);
      expect(res.status).toBe(409);
      expect((await json(res)).error).toContain('is used by 1 skill');
    });

    it('refuses a consumer key for managing groups', async () => {
      const creator = await newCreator(fx.request);
      const { key } = await createKey(fx.request, creator.token, 'consumer');
      expect((await fx.request('/groups', jsonPost({ name: 'nope' }, bearer(key)))).status).toBe(403);
    });
  });
}
