/**
 * Intake that resists spam: one endpoint is listed once (a second listing of a URL, by anyone, is
 * refused naming the first), and a creator lists at most MARKET_NEW_SKILLS_PER_HOUR new skills in
 * any hour (re-registrations and edits are free), also when the registrations arrive at once.
 */
import { describe, expect, it } from 'bun:test';
import { bearer, jsonPost } from '../support/auth';
import { json, newCreator } from '../support/catalogue';
import { databaseKinds } from '../support/database';
import { registryFixture } from '../support/registry';

for (const kind of databaseKinds) {
  describe(`skill intake on ${kind}`, () => {
    const fx = registryFixture(kind, { catalogue: { allowHttpEndpoints: false, viewWindowSeconds: 3600, newSkillsPerHour: 3 } });

    it('refuses a second listing of one endpoint by another creator, naming the first; its owner re-registers it freely', async () => {
      const first = await newCreator(fx.request);
      const copier = await newCreator(fx.request);
      const endpoint = `https://weather-${crypto.randomUUID().slice(0, 8)}.example.com`;
      const listed = await first.register({ name: 'forecast', endpoint });
      expect(listed.status).toBe(201);
      const { slug } = await json(listed);

      const copy = await copier.register({ name: 'forecast', endpoint });
      expect(copy.status).toBe(409);
      expect(await json(copy)).toMatchObject({
        code: 'CONFLICT',
        error: expect.stringContaining(`${endpoint}/forecast is already listed as the skill "${slug}"`),
        details: [{ field: 'endpoint' }],
      });
      // The full call URL is the same endpoint.
      expect((await copier.register({ name: 'forecast', endpoint: `${endpoint}/forecast` })).status).toBe(409);
      // Another path on that server is another endpoint.
      expect((await copier.register({ name: 'forecast-eu', endpoint })).status).toBe(201);
      // Its owner: an update of the same listing.
      expect((await first.register({ name: 'forecast', endpoint, description: 'Tomorrow’s weather' })).status).toBe(200);
      // Moving an existing skill onto a taken URL is refused too; its own URL stays its own.
      expect((await copier.register({ name: 'forecast', endpoint: `${endpoint}/moved` })).status).toBe(201);
      expect((await copier.register({ name: 'forecast', endpoint: `${endpoint}/forecast` })).status).toBe(409);
      const bySlug = await json(await fx.request(`/skills/${slug}`));
      expect(bySlug).toMatchObject({ endpoint: `${endpoint}/forecast`, description: 'Tomorrow’s weather' });
    });

    it('lists at most 3 new skills an hour per creator, with Retry-After; updates pass; another creator is not held up; an hour on it lists again', async () => {
      const creator = await newCreator(fx.request);
      const endpoint = `https://tools-${crypto.randomUUID().slice(0, 8)}.example.com`;
      for (const name of ['one', 'two', 'three']) {
        expect((await creator.register({ name, endpoint })).status).toBe(201);
        fx.clock.advance(60);
      }
      const fourth = await creator.register({ name: 'four', endpoint });
      expect(fourth.status).toBe(429);
      // The first of the three was listed 3 minutes ago: a place frees 57 minutes from now.
      expect(fourth.headers.get('retry-after')).toBe(String(57 * 60));
      expect(await json(fourth)).toMatchObject({
        code: 'RATE_LIMITED',
        error: expect.stringContaining('at most 3 new listings per creator per hour'),
      });

      expect((await creator.register({ name: 'two', endpoint, description: 'changed' })).status).toBe(200);
      const other = await newCreator(fx.request);
      expect((await other.register({ name: 'four', endpoint: `${endpoint}/else` })).status).toBe(201);

      fx.clock.advance(57 * 60);
      expect((await creator.register({ name: 'four', endpoint })).status).toBe(201);
      expect((await creator.register({ name: 'five', endpoint })).status).toBe(429);
    });

    it('registers concurrent submissions of one new skill as one listing, neither refused nor counted twice', async () => {
      const creator = await newCreator(fx.request);
      const group = (await creator.group()).name;
      const endpoint = `https://twice-${crypto.randomUUID().slice(0, 8)}.example.com`;
      const answers = await Promise.all([1, 2].map(() => creator.register({ name: 'twice', endpoint, groups: [group] })));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 201]);
    });

    it('lets exactly 3 of 6 concurrent new registrations of one creator through', async () => {
      const creator = await newCreator(fx.request);
      const group = (await creator.group()).name;
      const endpoint = `https://burst-${crypto.randomUUID().slice(0, 8)}.example.com`;
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          fx.request(
            '/skills',
            jsonPost(
              { name: `burst-${i}`, endpoint, price: '$0.001', paymentAddress: creator.address, groups: [group] },
              bearer(creator.key),
            ),
          ),
        ),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 429, 429, 429]);
      const mine = await json<unknown[]>(await fx.request('/creators/me/skills', { headers: bearer(creator.key) }));
      expect(mine).toHaveLength(3);
    });
  });
}
