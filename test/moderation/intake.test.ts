/**
 * Intake that resists spam: a creator lists at most MARKET_LISTINGS_PER_HOUR new skills an hour
 * (re-registering one counts nothing), and one call URL is one listing: the same endpoint
 * registered as a second skill, by anyone, is refused 409 naming the first.
 */
import { describe, expect, it } from 'bun:test';
import { json, newCreator } from '../support/catalogue';
import { databaseKinds } from '../support/database';
import { registryFixture } from '../support/registry';

const LISTINGS_PER_HOUR = 3;

for (const kind of databaseKinds) {
  describe(`listing intake on ${kind}`, () => {
    const fx = registryFixture(kind, { moderation: { operators: [], reportsPerHour: 10, listingsPerHour: LISTINGS_PER_HOUR } });
    const unique = () => crypto.randomUUID().slice(0, 8);

    it('lists at most the hourly number of new skills per creator; re-registrations do not count; an hour later it may list again', async () => {
      const creator = await newCreator(fx.request);
      const group = (await creator.group()).name;
      const names = [0, 1, 2].map((i) => `spam-${i}-${unique()}`);
      for (const name of names) expect((await creator.register({ name, groups: [group] })).status).toBe(201);
      // Re-registering an existing one is an update: allowed, and not a new listing.
      expect((await creator.register({ name: names[0], groups: [group], description: 'changed' })).status).toBe(200);
      const refused = await creator.register({ name: `spam-3-${unique()}`, groups: [group] });
      expect(refused.status).toBe(429);
      expect(await json(refused)).toMatchObject({
        error: `Too many new listings: at most ${LISTINGS_PER_HOUR} an hour; try again later`,
        code: 'RATE_LIMITED',
      });
      // Another creator is not held back.
      expect((await (await newCreator(fx.request)).register({ name: `other-${unique()}` })).status).toBe(201);
      fx.clock.advance(3601);
      expect((await creator.register({ name: `spam-4-${unique()}`, groups: [group] })).status).toBe(201);
    });

    it('refuses an endpoint already listed as another skill, naming it, whoever registers it', async () => {
      const first = await newCreator(fx.request);
      const copier = await newCreator(fx.request);
      const name = `echo-${unique()}`;
      const original = await json(await first.register({ name, endpoint: 'https://api.example.com/v1' }));
      expect(original.endpoint).toBe(`https://api.example.com/v1/${name}`);

      const copy = await copier.register({ name, endpoint: 'https://api.example.com/v1' });
      expect(copy.status).toBe(409);
      expect(await json(copy)).toMatchObject({
        error: `This endpoint is already listed as the skill "${original.slug}": one endpoint, one listing`,
        code: 'CONFLICT',
      });
      // Moving an existing skill onto a taken URL is refused too; its own URL stays its own.
      expect((await copier.register({ name, endpoint: 'https://copy.example.com' })).status).toBe(201);
      expect((await copier.register({ name, endpoint: 'https://api.example.com/v1' })).status).toBe(409);
      expect((await first.register({ name, endpoint: 'https://api.example.com/v1' })).status).toBe(200);
    });

    it('registers concurrent submissions of one new skill as one listing, neither refused', async () => {
      const creator = await newCreator(fx.request);
      const group = (await creator.group()).name;
      const name = `twice-${unique()}`;
      const answers = await Promise.all([creator.register({ name, groups: [group] }), creator.register({ name, groups: [group] })]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 201]);
    });
  });
}
