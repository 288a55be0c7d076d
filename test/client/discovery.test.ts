/**
 * Discovery without a wallet (search with pagination, info, groups), favorites with a consumer
 * key, and a client that trusts no registry: bad bodies become named errors with status and excerpt.
 */
import { describe, expect, it } from 'bun:test';
import { MarketError, RegistryError, SkillMarket, type FetchLike } from 'skill-market';
import { useWorld } from './support/world';

const world = useWorld({ chain: false });

const discovery = (fetchImpl?: FetchLike) => new SkillMarket({ apiUrl: world.registryUrl, ...(fetchImpl ? { fetch: fetchImpl } : {}) });

function answering(body: string, status = 200, headers: Record<string, string> = { 'content-type': 'application/json' }): FetchLike {
  return async () => new Response(body, { status, headers });
}

describe('discovery', () => {
  it('searches without a wallet and pages through results with nextCursor', async () => {
    const word = `zebra${crypto.randomUUID().slice(0, 6)}`;
    for (let i = 0; i < 3; i++) await world.addSkill({ name: `${word}-${i}` });
    const market = discovery();
    const first = await market.search(word, { limit: 2, sort: 'newest' });
    expect(first.skills).toHaveLength(2);
    expect(first.nextCursor).toBeString();
    const second = await market.search(word, { limit: 2, sort: 'newest', cursor: first.nextCursor! });
    expect(second.skills).toHaveLength(1);
    expect(second.nextCursor).toBeUndefined();
    const names = [...first.skills, ...second.skills].map((s) => s.name).sort();
    expect(names).toEqual([`${word}-0`, `${word}-1`, `${word}-2`]);
    expect(first.skills[0]).toMatchObject({ price: '$0.01', priceAtomic: '10000', isActive: true });
  });

  it('reads one skill with info() and the groups with groups()', async () => {
    const skill = await world.addSkill();
    const market = discovery();
    const info = await market.info(skill.slug);
    expect(info).toMatchObject({
      id: skill.id,
      slug: skill.slug,
      endpoint: `${world.server.url}/${skill.name}`,
      paymentAddress: skill.payTo,
    });
    const groups = await market.groups({ creator: world.creator.address });
    expect(groups.map((g) => g.name)).toEqual(info.groups);
  });

  it('answers RegistryError skill_not_found (404) for an unknown slug', async () => {
    const error = await discovery()
      .info('no-such-skill')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegistryError);
    expect(error).toMatchObject({ code: 'skill_not_found', status: 404, registryCode: 'NOT_FOUND' });
    expect((error as RegistryError).requestId).toBeString();
  });
});

describe('favorites', () => {
  it('adds and removes a favorite with the consumer key', async () => {
    const skill = await world.addSkill();
    const market = world.market();
    expect(await market.favorite(skill.slug)).toEqual({ favorited: true, favoriteCount: 1 });
    expect(await market.favorite(skill.slug, false)).toEqual({ favorited: false, favoriteCount: 0 });
  });

  it('needs credentials, and says so without calling the registry', async () => {
    const skill = await world.addSkill();
    const error = await discovery()
      .favorite(skill.slug)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'credentials_required' });
  });

  it('surfaces the registry’s 401 for a bad key as RegistryError with its message', async () => {
    const skill = await world.addSkill();
    const market = new SkillMarket({ apiUrl: world.registryUrl, apiKey: 'ck_not_a_real_key' });
    const error = await market.favorite(skill.slug).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegistryError);
    expect(error).toMatchObject({ code: 'registry_error', status: 401 });
    expect((error as Error).message).toContain('401');
  });
});

describe('a client that trusts no registry', () => {
  const skill = {
    id: '6f1c1f0e-8f7e-4a8e-9d7b-5d8e2c1a0b11',
    slug: 'echo',
    name: 'echo',
    description: null,
    price: '$0.01',
    priceAtomic: '10000',
    network: 'eip155:8453',
    endpoint: 'https://skills.example.com/echo',
    paymentAddress: '0x1111111111111111111111111111111111111111',
    inputSchema: null,
    outputSchema: null,
    isActive: true,
    groups: ['tools'],
  };
  const bad: [string, unknown, RegExp][] = [
    ['a price that disagrees with priceAtomic', { ...skill, priceAtomic: '1' }, /price \$0.01 disagrees/],
    ['a malformed payment address', { ...skill, paymentAddress: '0x123' }, /paymentAddress/],
    ['an endpoint that is not http(s)', { ...skill, endpoint: 'ftp://skills.example.com/echo' }, /endpoint/],
    ['a network that is not CAIP-2', { ...skill, network: 'base' }, /network/],
    ['a missing isActive', { ...skill, isActive: undefined }, /isActive/],
    ['another skill than asked for', { ...skill, slug: 'other' }, /other for echo/],
  ];
  for (const [what, body, message] of bad) {
    it(`refuses ${what}`, async () => {
      const error = await discovery(answering(JSON.stringify(body)))
        .info('echo')
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MarketError);
      expect(error).toMatchObject({ code: 'invalid_response', status: 200 });
      expect((error as Error).message).toMatch(message);
    });
  }

  it('refuses a body that is not JSON, quoting an excerpt of it', async () => {
    const html = `<html>${'gateway '.repeat(100)}</html>`;
    const error = await discovery(answering(html, 200, { 'content-type': 'text/html' }))
      .search('x')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid_response', status: 200 });
    expect((error as MarketError).body!.length).toBeLessThanOrEqual(241);
    expect((error as MarketError).body).toStartWith('<html>gateway');
  });

  it('refuses a search answer that is not an array, naming the bad item of one that is', async () => {
    expect(
      await discovery(answering('{"skills": []}'))
        .search('x')
        .catch((e: unknown) => e),
    ).toMatchObject({ code: 'invalid_response' });
    const error = await discovery(answering(JSON.stringify([skill, { ...skill, price: 'free' }])))
      .search('x')
      .catch((e: unknown) => e);
    expect((error as Error).message).toContain('item 1');
  });

  it('reports a 5xx with its status, the registry message and request id', async () => {
    const body = JSON.stringify({ error: 'Internal server error', code: 'INTERNAL', requestId: 'req-123' });
    const error = await discovery(answering(body, 500))
      .search('x')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'registry_error', status: 500, registryCode: 'INTERNAL', requestId: 'req-123' });
    expect((error as Error).message).toBe('Registry search failed with 500: Internal server error');
  });

  it('fails at construction with a clear message for a missing or bad option', () => {
    expect(() => new SkillMarket({} as never)).toThrow('apiUrl');
    expect(() => new SkillMarket({ apiUrl: 'http://x', wallet: '0x1234' })).toThrow('wallet must be');
    expect(() => new SkillMarket({ apiUrl: 'http://x', budget: '$1,000' })).toThrow('budget');
    expect(() => new SkillMarket({ apiUrl: 'http://x', network: 'base-mainnet' })).toThrow('network');
  });

  it('never echoes a private key in its errors', () => {
    const key = `0x${'ab'.repeat(31)}`;
    let message = '';
    try {
      new SkillMarket({ apiUrl: 'http://x', wallet: key });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).not.toContain('abab');
  });
});
