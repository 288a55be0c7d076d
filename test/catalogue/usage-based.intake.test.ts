/**
 * A usage-based price in the listing: `usageBased` as the registration says it (the SDK sends its
 * skill's `upto`), false for a registration that does not say, kept by one that does not say
 * again, set by PATCH, and answered by the skill, search and creator reads alike.
 */
import { beforeAll, describe, expect, it } from 'bun:test';
import { bearer } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { registryFixture } from '../support/registry';

const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
let creator: Creator;
let group: string;

beforeAll(async () => {
  creator = await newCreator(fx.request);
  group = (await creator.group()).name;
});

const uniqueName = () => `byuse${crypto.randomUUID().slice(0, 8)}`;
const register = (body: Record<string, unknown>) => creator.register({ groups: [group], ...body });
const patch = (slug: string, body: unknown) =>
  fx.request(`/skills/${slug}`, {
    method: 'PATCH',
    headers: { ...bearer(creator.key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('usage-based prices in listings', () => {
  it('lists a registration that says usageBased as such in the skill, search and creator reads', async () => {
    const name = uniqueName();
    const res = await register({ name, price: '$0.01', usageBased: true, description: `Charged by the word ${name}` });
    expect(res.status).toBe(201);
    const { slug } = await json<{ slug: string }>(res);
    expect(await json(await fx.request(`/skills/${slug}`))).toMatchObject({ price: '$0.01', priceAtomic: '10000', usageBased: true });
    const found = await json<{ slug: string; usageBased: boolean }[]>(await fx.request(`/skills?q=${name}`));
    expect(found.map((s) => [s.slug, s.usageBased])).toEqual([[slug, true]]);
    const mine = await json<{ slug: string; usageBased: boolean }[]>(
      await fx.request('/creators/me/skills', { headers: bearer(creator.key) }),
    );
    expect(mine.find((s) => s.slug === slug)?.usageBased).toBe(true);
  });

  it('lists a registration that does not say at a flat price, and keeps the listed value when it still does not say', async () => {
    const name = uniqueName();
    const flat = await json<{ slug: string; usageBased: boolean }>(await register({ name }));
    expect(flat.usageBased).toBe(false);
    expect(await json(await register({ name, usageBased: true }))).toMatchObject({ slug: flat.slug, usageBased: true });
    // An older skill server re-registers without the field: the listing stays usage-based.
    const older = await register({ name });
    expect(older.status).toBe(200);
    expect(await json(older)).toMatchObject({ usageBased: true });
    // A definition that dropped `upto` says false: a flat price again.
    expect(await json(await register({ name, usageBased: false }))).toMatchObject({ usageBased: false });
  });

  it('takes usageBased from PATCH for a server that does not send it, and refuses a value that is not true or false', async () => {
    const name = uniqueName();
    const { slug } = await json<{ slug: string }>(await register({ name }));
    const patched = await patch(slug, { usageBased: true });
    expect(patched.status).toBe(200);
    expect(await json(patched)).toMatchObject({ usageBased: true });
    expect(await json(await register({ name }))).toMatchObject({ usageBased: true });

    const refused = await patch(slug, { usageBased: 'yes' });
    expect(refused.status).toBe(400);
    expect((await json<{ error: string }>(refused)).error).toContain('usageBased');
    const badRegistration = await register({ name, usageBased: 1 });
    expect(badRegistration.status).toBe(400);
    expect((await json<{ error: string }>(badRegistration)).error).toContain('usageBased');
  });
});
