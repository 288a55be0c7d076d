import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { openDatabase, type DatabaseHandle, type DatabaseKind } from '../../src/db';
import { authTestConfig, bearer, jsonPost, providerKeys } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { createMigratedPostgresDatabase, databaseKinds, openTestDatabase } from '../support/database';
import { lastReading } from '../support/eventually';
import { manualClock, registryWith } from '../support/registry';
import { CHANGES_CHANNEL } from '../../src/registry/cache/changes';

/**
 * Two registry instances over one database, each with its own read cache: on PostgreSQL two
 * processes' worth of pools (one per instance, each with its own LISTEN connection); embedded,
 * two apps on the one in-process database. Caches here keep answers 60 s, so anything seen
 * sooner on the other instance came through a change notification.
 */
async function twoHandles(kind: DatabaseKind): Promise<{ a: DatabaseHandle; b: DatabaseHandle; close(): Promise<void> }> {
  if (kind === 'embedded') {
    const one = await openTestDatabase('embedded');
    return { a: one, b: one, close: () => one.close() };
  }
  const created = await createMigratedPostgresDatabase();
  const a = await openDatabase({ kind: 'postgres', url: created.url, poolSize: 3 });
  const b = await openDatabase({ kind: 'postgres', url: created.url, poolSize: 3 });
  return {
    a,
    b,
    close: async () => {
      await Promise.all([a.close(), b.close()]);
      await created.drop();
    },
  };
}

const patch = (body: unknown, key: string): RequestInit => ({
  method: 'PATCH',
  headers: { 'content-type': 'application/json', ...bearer(key) },
  body: JSON.stringify(body),
});

for (const kind of databaseKinds) {
  describe(`read cache across two registry instances on ${kind}`, () => {
    let handles: Awaited<ReturnType<typeof twoHandles>>;
    let a: ReturnType<typeof registryWith>;
    let b: ReturnType<typeof registryWith>;
    let creator: Creator;
    const clock = manualClock();
    let c: ReturnType<typeof registryWith>;

    beforeAll(async () => {
      handles = await twoHandles(kind);
      const config = authTestConfig((await providerKeys()).publicKeyPem, { readCacheMs: 60_000 });
      a = registryWith(handles.a, config);
      b = registryWith(handles.b, config);
      // A third instance on B's database with the default 1 s bound and a clock the test moves.
      c = registryWith(handles.b, { ...config, readCacheMs: 1000 }, clock);
      creator = await newCreator(a.request);
    });
    afterAll(() => handles.close());

    const register = async (description: string) => {
      const res = await creator.register({ description });
      expect(res.status).toBe(201);
      return json(res);
    };
    /**
     * Registers a skill and waits for its change notification to reach B's database handle, so
     * that it cannot arrive after a read of B and drop what that read cached (the tests of counters
     * need the cached answer to stay put).
     */
    const registerSettled = async (description: string) => {
      const payloads: string[] = [];
      const stop = await handles.b.listen(CHANGES_CHANNEL, (payload) => payloads.push(payload));
      try {
        const skill = await register(description);
        await lastReading(async () => payloads.includes(`skill:${skill.id}`), Boolean);
        return skill;
      } finally {
        await stop();
      }
    };
    const listing = async (app: typeof a, slug: string, headers: Record<string, string> = {}) =>
      json(await app.request(`/skills/${slug}`, { headers }));
    const search = async (app: typeof a, q: string) =>
      (await json<any[]>(await app.request(`/skills?q=${encodeURIComponent(q)}`))).map((s) => s.slug);

    it('shows a change made on A in B’s cached listing and search pages', async () => {
      const word = `zebu${crypto.randomUUID().slice(0, 6)}`;
      const skill = await register(`Counts ${word} herds`);
      expect((await listing(b, skill.slug)).price).toBe('$0.001');
      expect(await search(b, word)).toEqual([skill.slug]);

      expect((await a.request(`/skills/${skill.slug}`, patch({ price: '$0.25', description: 'Counts goats' }, creator.key))).status).toBe(
        200,
      );
      expect(
        (
          await lastReading(
            () => listing(b, skill.slug),
            (s) => s.price === '$0.25',
          )
        ).price,
      ).toBe('$0.25');
      expect(
        await lastReading(
          () => search(b, word),
          (slugs) => slugs.length === 0,
        ),
      ).toEqual([]);
    });

    it('propagates deactivation: B stops finding the skill and lists it inactive', async () => {
      const word = `okapi${crypto.randomUUID().slice(0, 6)}`;
      const skill = await register(`Finds ${word}`);
      expect(await search(b, word)).toEqual([skill.slug]);
      expect((await listing(b, skill.slug)).isActive).toBe(true);

      expect((await a.request(`/skills/${skill.slug}`, patch({ isActive: false }, creator.key))).status).toBe(200);
      expect(
        (
          await lastReading(
            () => listing(b, skill.slug),
            (s) => s.isActive === false,
          )
        ).isActive,
      ).toBe(false);
      expect(
        await lastReading(
          () => search(b, word),
          (slugs) => slugs.length === 0,
        ),
      ).toEqual([]);

      expect((await a.request(`/skills/${skill.slug}`, patch({ isActive: true }, creator.key))).status).toBe(200);
      expect(
        await lastReading(
          () => search(b, word),
          (slugs) => slugs.length === 1,
        ),
      ).toEqual([skill.slug]);
    });

    it('shows a group rename on the other instance', async () => {
      const group = await creator.group();
      const res = await creator.register({ groups: [group.name] });
      const skill = await json(res);
      expect((await listing(b, skill.slug)).groups).toEqual([group.name]);
      const renamed = `renamed-${crypto.randomUUID().slice(0, 6)}`;
      const rename = await a.request(`/groups/${group.slug}`, patch({ name: renamed }, creator.key));
      expect(rename.status).toBe(200);
      expect(
        (
          await lastReading(
            () => listing(b, skill.slug),
            (s) => s.groups[0] === renamed,
          )
        ).groups,
      ).toEqual([renamed]);
    });

    it('shows a change of the skill server’s health on the other instance', async () => {
      const skill = await register('Served somewhere');
      const serverUrl = skill.endpoint.replace(/\/[^/?#]*([?#].*)?$/, '');
      await handles.a.db.execute(
        sql`insert into server_health (server_url, host, status, next_probe_at) values (${serverUrl}, 'skills.example.com', 'unknown', now()) on conflict do nothing`,
      );
      const before = (await listing(b, skill.slug)).status;
      const after = before === 'up' ? 'down' : 'up';
      await handles.a.db.execute(sql`update server_health set status = ${after} where server_url = ${serverUrl}`);
      expect(
        (
          await lastReading(
            () => listing(b, skill.slug),
            (s) => s.status === after,
          )
        ).status,
      ).toBe(after);
    });

    it('lets the writer see their own write at once: on the instance written to, and with a credential anywhere', async () => {
      const skill = await register('A skill about to change');
      expect((await listing(a, skill.slug)).price).toBe('$0.001');
      expect((await listing(b, skill.slug)).price).toBe('$0.001');
      expect((await a.request(`/skills/${skill.slug}`, patch({ price: '$0.5' }, creator.key))).status).toBe(200);
      // No waiting: A dropped its own entry; a request with a credential reads past B's cache.
      expect((await listing(a, skill.slug)).price).toBe('$0.5');
      expect((await listing(b, skill.slug, bearer(creator.key))).price).toBe('$0.5');
    });

    it('keeps counters, which change without notice, at most the stated age', async () => {
      const skill = await registerSettled('Counted quietly');
      expect((await listing(c, skill.slug)).viewCount).toBe(0);
      // A write no trigger announces (as counters are): the cached answer stands until its age runs out.
      await handles.a.db.execute(sql`update skill_stats set view_count = 42 where skill_id = ${skill.id}`);
      expect((await listing(c, skill.slug)).viewCount).toBe(0);
      clock.advance(0.999);
      expect((await listing(c, skill.slug)).viewCount).toBe(0);
      clock.advance(0.002);
      expect((await listing(c, skill.slug)).viewCount).toBe(42);
    });

    it('counts a view on A into B’s listing within the bound', async () => {
      const skill = await registerSettled('Viewed');
      expect((await listing(c, skill.slug)).viewCount).toBe(0);
      expect((await a.request('/analytics/view', jsonPost({ skillId: skill.id }))).status).toBe(200);
      expect((await listing(a, skill.slug)).viewCount).toBe(1); // the writing instance at once
      clock.advance(1);
      expect((await listing(c, skill.slug)).viewCount).toBe(1);
    });

    it('answers 304 to a matching If-None-Match, and a new tag after a change', async () => {
      const skill = await register('Tagged');
      const first = await b.request(`/skills/${skill.slug}`);
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^"[0-9a-z]+-[0-9a-z]+"$/);
      expect(first.headers.get('cache-control')).toBe('public, max-age=60');
      expect(first.headers.get('x-request-id')).toBeTruthy();

      const again = await b.request(`/skills/${skill.slug}`, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      expect((await b.request(`/skills/${skill.slug}`, { headers: { 'if-none-match': `W/${etag}, "other"` } })).status).toBe(304);
      expect((await b.request(`/skills/${skill.slug}`, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);

      const page = await b.request('/skills?q=tagged');
      expect(page.headers.get('cache-control')).toBe('public, max-age=60');
      expect((await b.request('/skills?q=tagged', { headers: { 'if-none-match': page.headers.get('etag')! } })).status).toBe(304);

      expect((await a.request(`/skills/${skill.slug}`, patch({ description: 'Retagged' }, creator.key))).status).toBe(200);
      const changed = await lastReading(
        () => b.request(`/skills/${skill.slug}`, { headers: { 'if-none-match': etag } }),
        (res) => res.status === 200,
      );
      expect(changed.status).toBe(200);
      expect(changed.headers.get('etag')).not.toBe(etag);
      expect((await json(changed)).description).toBe('Retagged');
    });

    it('never marks an answer to a request with a credential as publicly cacheable', async () => {
      const skill = await register('Private eyes');
      const withKey = await b.request(`/skills/${skill.slug}`, { headers: bearer(creator.key) });
      expect(withKey.status).toBe(200);
      expect(withKey.headers.get('cache-control')).toBe('private, no-cache');
      const withCookie = await b.request('/skills?q=private', { headers: { cookie: `market_token=${creator.token}` } });
      expect(withCookie.headers.get('cache-control')).toBe('private, no-cache');
      const own = await b.request('/creators/me/skills', { headers: bearer(creator.key) });
      expect(own.status).toBe(200);
      expect(own.headers.get('cache-control')).toBe('private, no-store');
      // An unrelated cookie is no credential: the answer stays public.
      const other = await b.request(`/skills/${skill.slug}`, { headers: { cookie: 'theme=dark' } });
      expect(other.headers.get('cache-control')).toBe('public, max-age=60');
    });

    it('never keeps a not-found answer: a skill registered after a 404 is found at once', async () => {
      const name = `later-${crypto.randomUUID().slice(0, 8)}`;
      const missing = await b.request(`/skills/${name}`);
      expect(missing.status).toBe(404);
      expect(missing.headers.get('cache-control')).toBeNull();
      const res = await creator.register({ name });
      expect((await json(res)).slug).toBe(name);
      expect((await b.request(`/skills/${name}`)).status).toBe(200);
    });
  });
}
