/**
 * A paid call in a token of 18 decimals reaches the registry exactly: the skill server reports the
 * atomic amount the payer signed for, not a USDC figure the registry would read with 6 decimals;
 * the registry, told its token's decimals (MARKET_USDC_DECIMALS), checks the payment against the
 * listed price in that token's units and shows the revenue, the payment history and a consumer's
 * usage in them; channel call records too, in atomic units or in the older decimal form.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import type { Address } from 'viem';
import { register, serve, skill, type SkillServer } from 'skill-market/creator';
import type { AssetInfo } from 'skill-market/x402';
import { RegistryClient } from 'skill-market/registry';
import { PAYMENT_VERIFICATION_DEFAULTS } from '../../src/config';
import { channelCalls, skillCalls, usageRecords } from '../../src/db/schema';
import { createPaymentVerifier, type PaymentVerifier } from '../../src/registry/modules/payment-verification';
import { bearer, createKey, jsonPost, walletSignIn } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { compileContracts, startChain, usdCoinAbi, type LocalChain, type TestAccount } from '../support/chain';
import { startFacilitatorFixture, type FacilitatorFixture } from '../support/facilitator';
import { memoryLogger, registryFixture } from '../support/registry';
import { paidPost, recordingLogger } from '../support/skill-server';

const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
let chain: LocalChain;
let facilitator: FacilitatorFixture;
let front: ReturnType<typeof Bun.serve>;
let server: SkillServer;
let creator: Creator;
let payer: TestAccount;
let token: AssetInfo;
let skillId: string;
let slug: string;
let verifier: PaymentVerifier;
let consumer: RegistryClient;
let transaction: string;
/** $0.001 at 18 decimals (1000 at 6). */
const PRICE = 10n ** 15n;

const paid = skill({ price: '$0.001', groups: ['tools'] }, () => ({ ok: true }));

beforeAll(async () => {
  chain = await startChain({ payers: 1 });
  const { UsdCoin18 } = await compileContracts();
  const deployer = chain.walletClient(chain.accounts.deployer);
  const deployed = await chain.publicClient.waitForTransactionReceipt({
    hash: await deployer.deployContract({ abi: usdCoinAbi, bytecode: UsdCoin18.bytecode }),
  });
  const address = deployed.contractAddress as Address;
  token = { address, name: 'USD Coin', version: '2', decimals: 18 };
  payer = chain.accounts.payer;
  await chain.publicClient.waitForTransactionReceipt({
    hash: await deployer.writeContract({ address, abi: usdCoinAbi, functionName: 'mint', args: [payer.address, 10n ** 18n] }),
  });
  // The registry's token is the 18-decimal one, and it is told so.
  fx.config.chain = { ...fx.config.chain, network: chain.network, usdcAddress: address, usdcDecimals: 18, rpcUrl: chain.rpcUrl };
  verifier = createPaymentVerifier({
    db: fx.database.db,
    config: { ...PAYMENT_VERIFICATION_DEFAULTS, enabled: true },
    chain: fx.config.chain,
    clock: fx.clock,
    logger: memoryLogger().logger,
  });
  facilitator = await startFacilitatorFixture(chain, 'embedded', { config: { assets: [chain.token.address, address] } });
  facilitator.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
  front = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request) => {
      const url = new URL(request.url);
      return fx.registry.app.handle(new Request(`http://localhost${url.pathname}${url.search}`, request));
    },
  });
  creator = await newCreator(fx.request);
  await creator.group('tools');
  const payee = await chain.createAccount();
  await creator.prove(payee);
  const payTo = payee.address;
  const apiUrl = `http://127.0.0.1:${front.port}`;
  const [registered] = await register(
    { paid },
    { apiKey: creator.key, apiUrl, paymentAddress: payTo, endpoint: 'http://skills.test', network: chain.network },
  );
  skillId = registered!.skillId!;
  slug = registered!.slug!;
  const session = await walletSignIn(fx.request);
  consumer = new RegistryClient({ apiUrl, apiKey: (await createKey(fx.request, session.token, 'consumer')).key });
  server = await serve(
    { paid },
    {
      port: 0,
      hostname: '127.0.0.1',
      wallet: payTo,
      facilitatorUrl: `http://127.0.0.1:${facilitator.facilitator.app.server!.port}`,
      network: chain.network,
      asset: token,
      apiKey: creator.key,
      apiUrl,
      logger: recordingLogger(),
      env: {},
      trackCalls: { baseDelayMs: 50, maxDelayMs: 200 },
    },
  );
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await front?.stop(true);
  await facilitator?.facilitator.app.stop();
  await facilitator?.close();
  await chain?.stop();
});

describe('call tracking in a token of 18 decimals', () => {
  it('records the paid amount in the token’s atomic units, exactly as signed and transferred', async () => {
    const res = await paidPost(`${server.url}/paid`, {}, payer);
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ success: true, result: { ok: true } });
    expect(await server.flushCalls()).toBe(true);
    const price = PRICE;
    const [record] = await fx.database.db.select().from(skillCalls).where(eq(skillCalls.skillId, skillId));
    expect(record?.amount).toBe(price);
    transaction = record!.paymentRef!;
    expect(
      await chain.publicClient.readContract({ address: token.address, abi: usdCoinAbi, functionName: 'balanceOf', args: [payer.address] }),
    ).toBe(10n ** 18n - price);
  });

  it('verifies the payment against the listed price in the token’s units and shows the revenue exactly', async () => {
    expect(await verifier.verifyNow()).toMatchObject({ verified: 1, rejected: 0 });
    const analytics = await json(await fx.request(`/analytics/${skillId}`));
    expect(analytics).toMatchObject({ paidCallCount: 1, totalRevenue: '0.001', totalRevenueAtomic: PRICE.toString() });
    expect(await json(await fx.request(`/skills/${slug}`))).toMatchObject({
      price: '$0.001',
      totalRevenue: '0.001',
      totalRevenueAtomic: PRICE.toString(),
    });
    const payments = await json(await fx.request(`/analytics/${skillId}/payments`, { headers: bearer(creator.key) }));
    expect(payments).toMatchObject([{ state: 'verified', amount: '0.001', amountAtomic: PRICE.toString() }]);
    const csv = await (await fx.request('/analytics/revenue.csv', { headers: bearer(creator.key) })).text();
    expect(csv).toContain(`,1,0.001000000000000000,${PRICE},${PRICE},0,0,0`);
  });

  it('keeps a consumer’s usage in the token’s atomic units, sent as such or in the older micro-USDC form', async () => {
    expect((await consumer.recordUsage({ skillId, amountAtomic: PRICE.toString(), paymentRef: transaction })).recorded).toBe(true);
    expect((await consumer.recordUsage({ skillId, amount: 1000, paymentRef: `0x${'ee'.repeat(32)}` })).recorded).toBe(true);
    await expect(consumer.recordUsage({ skillId, paymentRef: `0x${'ef'.repeat(32)}` })).rejects.toMatchObject({ status: 400 });
    const rows = await fx.database.db.select().from(usageRecords).where(eq(usageRecords.skillId, skillId));
    expect(rows.map((r) => r.amount)).toEqual([PRICE, PRICE]);
    const { items } = await consumer.usage();
    expect(items.map((r) => [r.amount, r.amountAtomic])).toEqual([
      ['0.001', PRICE.toString()],
      ['0.001', PRICE.toString()],
    ]);
  });

  it('records channel calls in the token’s atomic units: sent as such, or in whole tokens the older way', async () => {
    const atomicChannel = `0x${'a1'.repeat(32)}`;
    const olderChannel = `0x${'b2'.repeat(32)}`;
    // Beyond a signed 64-bit column: 20 whole tokens of 18 decimals.
    const large = 20n * 10n ** 18n;
    const res = await fx.request(
      '/analytics/calls',
      jsonPost(
        {
          calls: [
            { skillId, amountAtomic: (10n ** 15n).toString(), channelId: atomicChannel, chargedCumulativeAmount: large.toString() },
            { skillId, amount: '0.001', channelId: olderChannel, chargedCumulativeAmount: (10n ** 15n).toString() },
          ],
        },
        bearer(creator.key),
      ),
    );
    expect(await json(res)).toEqual({ success: true, recorded: 2, results: [{ status: 'recorded' }, { status: 'recorded' }] });
    const rows = await fx.database.db.select().from(channelCalls).where(eq(channelCalls.skillId, skillId));
    const byChannel = new Map(rows.map((r) => [r.channelId, r]));
    expect(byChannel.get(atomicChannel)).toMatchObject({ amount: 10n ** 15n, cumulative: large });
    expect(byChannel.get(olderChannel)).toMatchObject({ amount: 10n ** 15n });
  });
});
