/**
 * One price: the skill server asks what its listing says. A price edited through the registry
 * API the dashboard uses (PATCH /skills/:slug with the owner's session) reaches the 402 terms of a
 * running server within seconds, and a restart (re-registration with the module's old price)
 * neither undoes the edit in the listing nor in what the server asks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { decodePaymentRequired } from 'skill-market/x402';
import { bearer } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { oneDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { freePort } from '../support/process';
import { registryFixture } from '../support/registry';
import { recordingLogger } from '../support/skill-server';

/** The skills' payment address, proven by the creator. */
const payee = privateKeyToAccount(generatePrivateKey());
const wallet = payee.address;

/** The amount (atomic units) a skill's 402 asks. */
async function asked(server: SkillServer, name: string): Promise<string> {
  const res = await server.fetch(
    new Request(`${server.url}/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
  );
  expect(res.status).toBe(402);
  return decodePaymentRequired(res.headers.get('PAYMENT-REQUIRED')!).accepts[0]!.amount;
}

for (const kind of oneDatabase) {
  describe(`the skill server follows its listing's price (${kind})`, () => {
    const fx = registryFixture(kind, { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
    let apiUrl: string;
    let creator: Creator;
    let facilitatorUrl: string;

    beforeAll(async () => {
      fx.registry.app.listen({ hostname: '127.0.0.1', port: 0 });
      apiUrl = `http://127.0.0.1:${fx.registry.app.server!.port}`;
      facilitatorUrl = `http://127.0.0.1:${await freePort()}`; // nobody there: start-up only warns
      creator = await newCreator(fx.request);
      await creator.prove(payee);
      await creator.group('tools');
    });
    afterAll(async () => {
      await fx.registry.app.stop();
    });

    const start = (logger = recordingLogger()) =>
      serve(
        { priced: skill({ price: '$0.003', groups: ['tools'] }, () => ({ ok: true })) },
        {
          port: 0,
          hostname: '127.0.0.1',
          wallet,
          apiKey: creator.key,
          apiUrl,
          facilitatorUrl,
          trackCalls: false,
          listingRefreshMs: 100,
          register: { endpoint: 'http://skills.test', onError: 'throw' },
          logger,
          env: {},
        },
      );

    it('asks an edited price within seconds, and a restart keeps the edit in the listing and in the 402', async () => {
      const first = await start();
      const slug = first.registration[0]!.slug!;
      try {
        expect(await asked(first, 'priced')).toBe('3000');
        const edit = await fx.request(`/skills/${slug}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json', ...bearer(creator.token) },
          body: JSON.stringify({ price: '$0.005' }),
        });
        expect(edit.status).toBe(200);
        await eventually(
          () => asked(first, 'priced'),
          (amount) => amount === '5000',
          'the running server asks the edited price',
        );
      } finally {
        await first.stop();
      }

      const logger = recordingLogger();
      const second = await start(logger);
      try {
        expect(second.registration[0]).toMatchObject({ success: true, slug, price: '$0.005' });
        expect(await asked(second, 'priced')).toBe('5000');
        expect(logger.lines.join('\n')).toContain('now asks $0.005');
      } finally {
        await second.stop();
      }
      expect(await json(await fx.request(`/skills/${slug}`))).toMatchObject({ price: '$0.005' });
    });
  });
}
