import { describe, expect, it } from 'bun:test';
import { bearer } from '../support/auth';
import { registryFixture } from '../support/registry';
import { json, newCreator } from '../support/catalogue';
import { oneDatabase } from '../support/database';

for (const kind of oneDatabase) {
  describe(`PATCH /skills/:slug on ${kind}`, () => {
    const fx = registryFixture(kind);
    const patch = (slug: string, key: string, body: unknown) =>
      fx.request(`/skills/${slug}`, {
        method: 'PATCH',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    it('updates description, price, schemas and isActive for the owner', async () => {
      const creator = await newCreator(fx.request);
      const skill = await json(await creator.register());
      const res = await patch(skill.slug, creator.key, {
        description: 'New',
        price: '$0.05',
        inputSchema: { type: 'object', required: ['q'] },
        isActive: false,
      });
      expect(res.status).toBe(200);
      expect(await json(res)).toMatchObject({
        description: 'New',
        price: '$0.05',
        priceAtomic: '50000',
        inputSchema: { type: 'object', required: ['q'] },
        isActive: false,
      });
    });

    it('replaces all groups, and refuses an empty list', async () => {
      const creator = await newCreator(fx.request);
      const a = await creator.group('a-group');
      const b = await creator.group('b-group');
      const c = await creator.group('c-group');
      const skill = await json(await creator.register({ groups: [a.name, b.name] }));
      const res = await patch(skill.slug, creator.key, { groups: [c.name] });
      expect((await json(res)).groups).toEqual(['c-group']);
      const empty = await patch(skill.slug, creator.key, { groups: [] });
      expect(empty.status).toBe(400);
      expect((await json(empty)).error).toContain('"groups"');
    });

    it('answers 403 to another creator and 404 for an unknown slug', async () => {
      const owner = await newCreator(fx.request);
      const skill = await json(await owner.register());
      const other = await newCreator(fx.request);
      const res = await patch(skill.slug, other.key, { price: '$9' });
      expect(res.status).toBe(403);
      expect((await patch('no-such-skill', owner.key, { price: '$1' })).status).toBe(404);
      expect((await json(await fx.request(`/skills/${skill.slug}`))).price).toBe('$0.001');
    });

    it('hides an inactive skill from discovery but keeps it reachable by slug', async () => {
      const creator = await newCreator(fx.request);
      const skill = await json(await creator.register({ name: 'hideable' }));
      await patch(skill.slug, creator.key, { isActive: false });
      const listed = await json<any[]>(await fx.request(`/skills?q=&creator=${creator.address}`));
      expect(listed.map((s) => s.slug)).not.toContain(skill.slug);
      expect(await json(await fx.request(`/skills/${skill.slug}`))).toMatchObject({ slug: skill.slug, isActive: false });
      const own = await json<any[]>(await fx.request('/creators/me/skills', { headers: bearer(creator.key) }));
      expect(own.map((s) => s.slug)).toContain(skill.slug);
      const pub = await json(await fx.request(`/creators/${creator.address}`));
      expect(pub.skills.map((s: any) => s.slug)).not.toContain(skill.slug);
    });
  });
}
