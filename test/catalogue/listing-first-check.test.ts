/**
 * A listing goes public only once its server answered a health check (MARKET_LIST_AFTER_FIRST_CHECK,
 * on in production): until then it is answered by slug and shown to its creator, but left out of
 * search, the creator's and group's public pages and discovery; a server that never answers is
 * never listed. A new listing tells the registry at once, so the prober checks it without waiting
 * for its next round.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { HEALTH_DEFAULTS } from '../../src/config';
import { createHealthProber } from '../../src/registry/modules/skill-health';
import { bearer } from '../support/auth';
import { type Creator, json, newCreator } from '../support/catalogue';
import { databaseKinds } from '../support/database';
import { freePort } from '../support/process';
import { memoryLogger, registryFixture } from '../support/registry';

for (const kind of databaseKinds) {
  describe(`listing after the first check on ${kind}`, () => {
    let listed = 0;
    const health = { ...HEALTH_DEFAULTS, enabled: false, allowPrivateAddresses: true, listAfterFirstCheck: true };
    const fx = registryFixture(
      kind,
      { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 }, health, readCacheMs: 0 },
      { listed: () => listed++ },
    );
    const live = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('{}') });
    let deadUrl: string;
    let creator: Creator;
    beforeAll(async () => {
      deadUrl = `http://127.0.0.1:${await freePort()}`; // nothing listens there
      creator = await newCreator(fx.request);
    });
    afterAll(() => live.stop(true));

    const slugs = async (path: string) => (await json<{ slug: string }[]>(await fx.request(path))).map((s) => s.slug).sort();
    /** The skills of the creator's public page and of a group's page. */
    const profile = async () =>
      (await json<{ skills: { slug: string }[] }>(await fx.request(`/creators/${creator.address}`))).skills.map((s) => s.slug);
    const groupPage = async (slug: string) =>
      (await json<{ skills: { slug: string }[] }>(await fx.request(`/groups/${slug}`))).skills.map((s) => s.slug);
    const discovered = async () =>
      (await json<{ items: { resource: string }[] }>(await fx.request('/discovery/resources?limit=100'))).items.map((i) => i.resource);

    it('keeps a new listing out of every public list until its server answers, says so on the pages, and never lists a server that does not answer', async () => {
      const group = await creator.group('weather');
      const answering = await json(
        await creator.register({ name: 'forecast', endpoint: `http://127.0.0.1:${live.port}`, groups: [group.name] }),
      );
      const silent = await json(await creator.register({ name: 'ghost', endpoint: deadUrl, groups: [group.name] }));
      expect(listed).toBe(2);
      // A re-registration is not a new listing.
      await creator.register({ name: 'forecast', endpoint: `http://127.0.0.1:${live.port}`, groups: [group.name] });
      expect(listed).toBe(2);

      const unlisted = async () => {
        expect(await slugs(`/skills?creator=${creator.address}`)).toEqual([]);
        expect(await slugs(`/skills?creator=${creator.address}&status=any`)).toEqual([]);
        expect(await profile()).toEqual([]);
        expect(await groupPage(group.slug)).toEqual([]);
        expect(await discovered()).not.toContain(answering.endpoint);
      };
      await unlisted();
      // Answered by slug, and to its creator, with no answer from its server yet.
      expect((await fx.request(`/skills/${answering.slug}`)).status).toBe(200);
      const mine = await json<{ slug: string; lastUpAt: string | null }[]>(
        await fx.request('/creators/me/skills', { headers: bearer(creator.key) }),
      );
      expect(mine.map((s) => [s.slug, s.lastUpAt]).sort()).toEqual([
        [answering.slug, null],
        [silent.slug, null],
      ]);
      expect(await json(await fx.request('/web/config'))).toMatchObject({ listAfterFirstCheck: true });

      const prober = createHealthProber({ db: fx.database.db, config: fx.config.health, clock: fx.clock, logger: memoryLogger().logger });
      await prober.probeNow();
      expect(await slugs(`/skills?creator=${creator.address}`)).toEqual([answering.slug]);
      expect(await profile()).toEqual([answering.slug]);
      expect(await groupPage(group.slug)).toEqual([answering.slug]);
      expect(await discovered()).toContain(answering.endpoint);
      expect(await discovered()).not.toContain(silent.endpoint);
      // A later failure does not take it back out of the default list at once (that is the down-for-long rule).
      fx.clock.advance(3600);
      await prober.probeNow();
      expect(await slugs(`/skills?creator=${creator.address}&status=any`)).toEqual([answering.slug]);
    });
  });
}
