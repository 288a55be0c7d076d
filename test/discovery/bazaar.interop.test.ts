/**
 * Standard x402 tooling finds and pays our skills: the unmodified Bazaar client of
 * `@x402/extensions` 2.27 lists and searches a registry on a port, each resource offers exactly
 * the terms the skill server (serve(), on a local chain) then asks in its 402, and the reference
 * client `@x402/fetch` pays a resource it found that way through our facilitator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { HTTPFacilitatorClient } from '@x402/core/http';
import { validateDiscoveryExtension, withBazaar, type DiscoveryExtension, type DiscoveryResource } from '@x402/extensions/bazaar';
import type { Address } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import type { DatabaseHandle } from '../../src/db';
import type { TestAccount } from '../support/chain';
import { providerKeys, authTestConfig } from '../support/auth';
import { newCreator, type Creator } from '../support/catalogue';
import { oneDatabase, openTestDatabase } from '../support/database';
import { freePort } from '../support/process';
import { registryWith } from '../support/registry';
import { postJson, recordingLogger, startPaymentStack, type PaymentStack } from '../support/skill-server';
import { referenceExactFetch } from '../support/reference-fetch';

let stack: PaymentStack;

beforeAll(async () => {
  stack = await startPaymentStack();
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

/** The terms a skill server's 402 asks, read from its PAYMENT-REQUIRED header as a client reads it. */
async function askedTerms(url: string, input: unknown): Promise<Record<string, unknown>> {
  const res = await postJson(url, input);
  expect(res.status).toBe(402);
  const header = res.headers.get('PAYMENT-REQUIRED');
  expect(header).toBeTruthy();
  return JSON.parse(Buffer.from(header!, 'base64').toString('utf8')) as Record<string, unknown>;
}

const referenceFetch = (account: TestAccount) => referenceExactFetch(stack.chain, account);

for (const kind of oneDatabase) {
  describe(`the @x402/extensions Bazaar client against our registry (${kind})`, () => {
    let database: DatabaseHandle;
    let registry: ReturnType<typeof registryWith>;
    let registryUrl: string;
    let creator: Creator;
    let server: SkillServer;
    let payee: Address;
    const bazaar = () => withBazaar(new HTTPFacilitatorClient({ url: registryUrl })).extensions.bazaar;
    const ours = (items: DiscoveryResource[]) => items.filter((i) => i.resource.startsWith(server.url));

    beforeAll(async () => {
      database = await openTestDatabase(kind);
      const config = authTestConfig((await providerKeys()).publicKeyPem, {
        catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 },
      });
      // The registry's network and token are the local chain's, its RPC the chain's node.
      config.chain = { ...config.chain, network: stack.chain.network, usdcAddress: stack.chain.token.address, rpcUrl: stack.chain.rpcUrl };
      registry = registryWith(database, config);
      registry.app.listen({ hostname: '127.0.0.1', port: 0 });
      registryUrl = `http://127.0.0.1:${registry.app.server!.port}`;
      creator = await newCreator(registry.request);
      await creator.group('text');
      const payeeAccount = await stack.chain.createAccount();
      await creator.prove(payeeAccount);
      payee = payeeAccount.address;
      const port = await freePort();
      server = await serve(
        {
          shout: skill(
            {
              price: '$0.02',
              description: 'Upper-cases text',
              inputSchema: { type: 'object', properties: { text: { type: 'string', minLength: 1 } }, required: ['text'] },
              outputSchema: { type: 'object', properties: { shout: { type: 'string' } }, required: ['shout'] },
              groups: ['text'],
            },
            ({ text }: { text: string }) => ({ shout: text.toUpperCase() }),
          ),
          whisper: skill({ price: '$0.005', description: 'Lower-cases text', groups: ['text'] }, (input: { text?: string }) => ({
            whisper: String(input?.text ?? '').toLowerCase(),
          })),
        },
        {
          port,
          hostname: '127.0.0.1',
          wallet: payee,
          apiKey: creator.key,
          apiUrl: registryUrl,
          register: { endpoint: `http://127.0.0.1:${port}`, onError: 'throw' },
          facilitatorUrl: stack.facilitatorUrl,
          network: stack.chain.network,
          asset: stack.asset,
          trackCalls: false,
          // Channels off: the registry lists a channel offer only once its health probe has read it (see channels.test.ts).
          channels: false,
          logger: recordingLogger(),
          env: {},
        },
      );
      expect(server.registration.map((r) => r.success)).toEqual([true, true]);
    }, 60_000);

    afterAll(async () => {
      await server?.stop();
      await registry?.app.stop();
      await database?.close();
    });

    it('lists every skill of the server with the accepts its 402 then asks, deep-equal', async () => {
      const listed = await bazaar().listResources({ limit: 100 });
      expect(listed.x402Version).toBe(2);
      const found = ours(listed.items);
      expect(found.map((i) => i.resource).sort()).toEqual([`${server.url}/shout`, `${server.url}/whisper`]);
      for (const item of found) {
        const body = (item.extensions!.bazaar as DiscoveryExtension).info.input as { body: unknown };
        const asked = await askedTerms(item.resource, body.body);
        expect(item.accepts).toEqual(asked.accepts as typeof item.accepts);
        expect(item.accepts[0]).toEqual((asked.accepts as unknown[])[0] as (typeof item.accepts)[0]);
        expect(item.accepts[0]).toMatchObject({ network: stack.chain.network, asset: stack.chain.token.address, payTo: payee });
      }
      expect(listed.pagination).toEqual({ limit: 100, offset: 0, total: listed.items.length });
    });

    it('finds a skill by search, misspelt too, with the same terms', async () => {
      const found = await bazaar().search({ query: 'shout' });
      expect(found.x402Version).toBe(2);
      expect(ours(found.resources).map((r) => r.resource)).toEqual([`${server.url}/shout`]);
      const typo = await bazaar().search({ query: 'shoutt' });
      expect(ours(typo.resources).map((r) => r.resource)).toEqual([`${server.url}/shout`]);
      const asked = await askedTerms(`${server.url}/shout`, { text: 'hi' });
      expect(ours(found.resources)[0]!.accepts).toEqual(asked.accepts as DiscoveryResource['accepts']);
      expect(found.pagination).toEqual({ limit: 20, cursor: null });
    });

    it('describes each call so the extension’s own validator accepts it: POST, a JSON body of the input schema, an example that fits', async () => {
      const [shout] = ours((await bazaar().search({ query: 'shout' })).resources);
      const extension = shout!.extensions!.bazaar as DiscoveryExtension;
      expect(validateDiscoveryExtension(extension)).toEqual({ valid: true });
      expect(extension.info.input).toEqual({ type: 'http', method: 'POST', bodyType: 'json', body: { text: 'example' } });
      const schema = extension.schema as { properties: { input: { properties: { body: unknown } } } };
      expect(schema.properties.input.properties.body).toEqual({
        type: 'object',
        properties: { text: { type: 'string', minLength: 1 } },
        required: ['text'],
      });
      expect(shout).toMatchObject({ type: 'http', x402Version: 2, mimeType: 'application/json', serviceName: 'shout', tags: ['text'] });
      expect(shout!.description).toBe('Upper-cases text');
    });

    it('lets @x402/fetch pay a skill it found, with the example body, through our facilitator', async () => {
      const [shout] = ours((await bazaar().search({ query: 'upper cases' })).resources);
      expect(shout?.resource).toBe(`${server.url}/shout`);
      const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
      const before = await stack.chain.balanceOf(payee);
      const body = (shout!.extensions!.bazaar as DiscoveryExtension).info.input as { body: unknown };
      const res = await referenceFetch(payer)(shout!.resource, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body.body),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ success: true, result: { shout: 'EXAMPLE' } });
      const price = BigInt(shout!.accepts[0]!.amount);
      expect(price).toBe(20_000n);
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n - price);
      expect(await stack.chain.balanceOf(payee)).toBe(before + price);
    });
  });
}
