/**
 * A registry refuses skills on networks its marketplace cannot settle: those of
 * MARKET_SKILL_NETWORKS and those the facilitator at MARKET_FACILITATOR_URL lists in /supported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { loadRegistryConfig } from '../../src/config';
import { bearer, jsonPost } from '../support/auth';
import { json, newCreator, skillInput } from '../support/catalogue';
import { oneDatabase } from '../support/database';
import { registryFixture } from '../support/registry';

/** A facilitator's /supported, counting how often it is asked. */
let supportedServer: ReturnType<typeof Bun.serve>;
let asked = 0;
beforeAll(() => {
  supportedServer = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request) => {
      if (new URL(request.url).pathname !== '/supported') return new Response('not found', { status: 404 });
      asked++;
      return Response.json({ kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:84532' }], extensions: [], signers: {} });
    },
  });
});
afterAll(() => supportedServer.stop(true));

describe('MARKET_SKILL_NETWORKS and MARKET_FACILITATOR_URL', () => {
  it('read the networks (CAIP-2 or v1 names) and the URL, and refuse an empty list or a bad network', () => {
    const config = loadRegistryConfig({ MARKET_SKILL_NETWORKS: 'eip155:31337, base', MARKET_FACILITATOR_URL: 'http://127.0.0.1:4020' });
    expect(config.skillNetworks).toEqual({ networks: ['eip155:31337', 'eip155:8453'], facilitatorUrl: new URL('http://127.0.0.1:4020') });
    expect(loadRegistryConfig({}).skillNetworks).toBeUndefined();
    expect(() => loadRegistryConfig({ MARKET_SKILL_NETWORKS: ' , ' })).toThrow(/MARKET_SKILL_NETWORKS/);
    expect(() => loadRegistryConfig({ MARKET_SKILL_NETWORKS: 'mars' })).toThrow(/MARKET_SKILL_NETWORKS/);
  });
});

for (const kind of oneDatabase) {
  describe(`POST /skills on a marketplace that settles on some networks only, on ${kind}`, () => {
    const fx = registryFixture(kind, { skillNetworks: { networks: ['eip155:31337'] } });
    const withFacilitator = registryFixture(kind, {
      get skillNetworks() {
        return { networks: ['eip155:31337' as const], facilitatorUrl: new URL(`http://127.0.0.1:${supportedServer.port}`) };
      },
    });

    it('refuses a skill on another network with 400 naming what is supported, and lists one on a supported network', async () => {
      const creator = await newCreator(fx.request);
      const group = await creator.group();
      const refused = await fx.request(
        '/skills',
        jsonPost(skillInput({ paymentAddress: creator.address, groups: [group.name], network: 'eip155:8453' }), bearer(creator.key)),
      );
      expect(refused.status).toBe(400);
      expect(await json(refused)).toMatchObject({
        code: 'VALIDATION',
        error: expect.stringContaining('eip155:31337'),
        details: { network: 'eip155:8453', supported: ['eip155:31337'] },
      });
      const byDefault = await fx.request(
        '/skills',
        jsonPost(skillInput({ paymentAddress: creator.address, groups: [group.name] }), bearer(creator.key)),
      );
      expect(byDefault.status).toBe(400); // the default network, Base, is not settled here either
      const listed = await fx.request(
        '/skills',
        jsonPost(skillInput({ paymentAddress: creator.address, groups: [group.name], network: 'eip155:31337' }), bearer(creator.key)),
      );
      expect(listed.status).toBe(201);
    });

    it("adds the networks of the facilitator's /supported, asked once for many registrations", async () => {
      const creator = await newCreator(withFacilitator.request);
      const group = await creator.group();
      const before = asked;
      for (const name of ['one', 'two', 'three']) {
        const res = await withFacilitator.request(
          '/skills',
          jsonPost(
            skillInput({ paymentAddress: creator.address, name, groups: [group.name], network: 'eip155:84532' }),
            bearer(creator.key),
          ),
        );
        expect(res.status).toBe(201);
      }
      expect(asked - before).toBe(1);
      const refused = await withFacilitator.request(
        '/skills',
        jsonPost(
          skillInput({ paymentAddress: creator.address, name: 'four', groups: [group.name], network: 'eip155:8453' }),
          bearer(creator.key),
        ),
      );
      expect(await json(refused)).toMatchObject({ details: { supported: ['eip155:31337', 'eip155:84532'] } });
    });
  });
}
