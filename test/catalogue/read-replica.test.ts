import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import postgres from 'postgres';
import { openDatabase, type DatabaseHandle } from '../../src/db';
import { READ_APPLICATION_NAME } from '../../src/db/open';
import { authTestConfig, bearer, providerKeys } from '../support/auth';
import { json, newCreator } from '../support/catalogue';
import { createMigratedPostgresDatabase, TEST_DATABASE_URL } from '../support/database';
import { registryWith } from '../support/registry';

/**
 * DATABASE_READ_URL. No real replica runs here, so the read pool is pointed at stand-ins: the
 * same database under a second URL (to see which pool a read used, by the pool's
 * application_name in pg_stat_activity), and a second, empty database (a replica that has not
 * caught up yet: what a reader sees there came from the read pool, and the writer must not see it).
 */
describe.skipIf(!TEST_DATABASE_URL)('read replica (DATABASE_READ_URL) on postgres', () => {
  const dropped: (() => Promise<void>)[] = [];
  let admin: postgres.Sql;
  beforeAll(() => {
    admin = postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await admin.end();
    for (const drop of dropped) await drop();
  });

  async function registryOn(readUrl: (primaryUrl: string) => Promise<string>) {
    const primary = await createMigratedPostgresDatabase();
    dropped.push(primary.drop);
    const database: DatabaseHandle = await openDatabase({
      kind: 'postgres',
      url: primary.url,
      poolSize: 2,
      readUrl: await readUrl(primary.url),
    });
    dropped.unshift(() => database.close());
    const config = authTestConfig((await providerKeys()).publicKeyPem, { readCacheMs: 0 });
    const registry = registryWith(database, config);
    const creator = await newCreator(registry.request);
    return { registry, creator, name: new URL(primary.url).pathname.slice(1) };
  }

  it('sends anonymous discovery reads to the read pool', async () => {
    const { registry, creator, name } = await registryOn(async (url) => url);
    const skill = await json(await creator.register({ description: 'Read from the replica' }));
    const readers = async () =>
      Number(
        (
          await admin`select count(*)::int as n from pg_stat_activity where datname = ${name} and application_name = ${READ_APPLICATION_NAME}`
        )[0]!.n,
      );
    expect(await readers()).toBe(0); // registering and signing in used the primary only
    expect((await registry.request(`/skills/${skill.slug}`)).status).toBe(200);
    expect((await registry.request('/skills?q=replica')).status).toBe(200);
    expect(await readers()).toBeGreaterThan(0);
  });

  it('keeps read-your-writes: a request with a credential reads the primary, an anonymous one the (lagging) replica', async () => {
    const { registry, creator } = await registryOn(async () => {
      const lagging = await createMigratedPostgresDatabase(); // migrated, empty
      dropped.push(lagging.drop);
      return lagging.url;
    });
    const res = await creator.register({ description: 'Not replicated yet' });
    expect(res.status).toBe(201);
    const skill = await json(res);
    // The writer sees it at once, by slug and in search…
    expect((await registry.request(`/skills/${skill.slug}`, { headers: bearer(creator.key) })).status).toBe(200);
    const found = await json<any[]>(await registry.request('/skills?q=replicated', { headers: bearer(creator.key) }));
    expect(found.map((s) => s.slug)).toEqual([skill.slug]);
    // …while an anonymous reader is answered by the replica, which does not have it yet.
    expect((await registry.request(`/skills/${skill.slug}`)).status).toBe(404);
    expect(await json(await registry.request('/skills?q=replicated'))).toEqual([]);
  });
});
