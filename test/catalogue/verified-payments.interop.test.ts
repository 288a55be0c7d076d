/**
 * A payment made by the reference client (@x402/fetch) to a third-party x402 server (@x402/hono,
 * settling through our facilitator) for a listed skill, reported in the other SDK's shape without
 * a credential, and also as our client and our skill server would: it counts exactly once, after
 * the registry has verified it on chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { wrapFetchWithPayment } from '@x402/fetch';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import type { Address } from 'viem';
import { decodeSettleResponse } from 'skill-market/x402';
import { bearer, createKey, jsonPost, walletSignIn } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { startChain, type LocalChain, type TestAccount } from '../support/chain';
import { oneDatabase } from '../support/database';
import { startFacilitatorFixture, type FacilitatorFixture } from '../support/facilitator';
import { registryFixture, chainVerifier } from '../support/registry';

const PRICE = 10_000n; // $0.01

let chain: LocalChain;
let facilitator: FacilitatorFixture;
let server: ReturnType<typeof Bun.serve>;
let payee: Address;
let payeeAccount: TestAccount;

beforeAll(async () => {
  chain = await startChain({ payers: 2, relayers: 1 });
  facilitator = await startFacilitatorFixture(chain, 'embedded');
  facilitator.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
  payeeAccount = await chain.createAccount();
  payee = payeeAccount.address;
  const resourceServer = new x402ResourceServer(
    new HTTPFacilitatorClient({ url: `http://127.0.0.1:${facilitator.facilitator.app.server!.port}` }),
  ).register(chain.network, new ExactEvmScheme());
  const app = new Hono();
  app.use(
    paymentMiddleware(
      {
        'POST /forecast': {
          accepts: {
            scheme: 'exact',
            network: chain.network,
            payTo: payee,
            price: {
              amount: PRICE.toString(),
              asset: chain.token.address,
              extra: { name: chain.token.name, version: chain.token.version },
            },
          },
          description: 'Weather forecast',
        },
      },
      resourceServer,
    ),
  );
  app.post('/forecast', (c) => c.json({ forecast: 'sunny' }));
  server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
}, 60_000);

afterAll(async () => {
  await server?.stop(true);
  await facilitator?.facilitator.app.stop();
  await facilitator?.close();
  await chain?.stop();
});

/** Pays the third-party server with the reference client; the settlement transaction and payer. */
async function payWithReferenceClient(payerIndex: number): Promise<{ transaction: string; payer: string }> {
  const payer = chain.accounts.payers[payerIndex]!;
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: payer });
  client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.token.address }] });
  const res = await wrapFetchWithPayment(fetch, client)(`http://127.0.0.1:${server.port}/forecast`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  expect(res.status).toBe(200);
  const receipt = decodeSettleResponse(res.headers.get('PAYMENT-RESPONSE')!);
  expect(receipt.success).toBe(true);
  return { transaction: receipt.transaction, payer: payer.address };
}

for (const [index, kind] of oneDatabase.entries()) {
  describe(`a third-party x402 payment reported to the registry (${kind})`, () => {
    const fx = registryFixture(kind, { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
    let creator: Creator;
    let skill: { id: string; slug: string };
    let consumerKey: string;

    beforeAll(async () => {
      creator = await newCreator(fx.request);
      await creator.prove(payeeAccount);
      await creator.group('weather');
      const res = await creator.register({
        name: 'forecast',
        endpoint: `http://127.0.0.1:${server.port}/forecast`,
        price: '$0.01',
        paymentAddress: payee,
        network: chain.network,
        groups: ['weather'],
      });
      expect(res.status).toBe(201);
      skill = await json(res);
      const consumer = await walletSignIn(fx.request);
      consumerKey = (await createKey(fx.request, consumer.token, 'consumer')).key;
    });

    it('counts exactly once, once verified, though the other SDK, our client and our skill server all report it', async () => {
      const { transaction, payer } = await payWithReferenceClient(index);
      const reports = await Promise.all([
        fx.request(
          '/analytics/usage',
          jsonPost({ skillSlug: skill.slug, consumerAddress: payer, paymentTxHash: transaction, amount: '$0.01' }),
        ),
        fx.request(
          '/analytics/usage',
          jsonPost({ skillId: skill.id, amount: Number(PRICE), paymentRef: transaction }, bearer(consumerKey)),
        ),
        fx.request('/analytics/call', jsonPost({ skillId: skill.id, amount: '0.01', paymentRef: transaction }, bearer(creator.key))),
      ]);
      expect(reports.map((r) => r.status)).toEqual([200, 200, 200]);
      const stats = async () => json(await fx.request(`/analytics/${skill.id}`));
      expect(await stats()).toMatchObject({ callCount: 0, paidCallCount: 0, totalRevenueAtomic: '0' });

      const verifier = chainVerifier(fx, chain);
      expect(await verifier.verifyNow()).toMatchObject({ checked: 1, verified: 1 });
      expect(await verifier.verifyNow()).toMatchObject({ checked: 0 });
      expect(await stats()).toMatchObject({ callCount: 1, paidCallCount: 1, totalRevenueAtomic: PRICE.toString(), totalRevenue: '0.01' });
      expect((await json<any[]>(await fx.request(`/skills?creator=${creator.address}&sort=revenue`)))[0]).toMatchObject({
        slug: skill.slug,
        paidCallCount: 1,
        totalRevenue: '0.01',
      });
    });
  });
}
