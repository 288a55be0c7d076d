/**
 * A paid call in a token of 18 decimals reaches the registry's call record exactly: the skill
 * server reports the atomic amount the payer signed for, not a USDC figure the registry would read
 * with 6 decimals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import type { Address } from 'viem';
import { register, serve, skill, type SkillServer } from 'skill-market/creator';
import type { AssetInfo } from 'skill-market/x402';
import { skillCalls } from '../../src/db/schema';
import { json, newCreator, type Creator } from '../support/catalogue';
import { compileContracts, startChain, usdCoinAbi, type LocalChain, type TestAccount } from '../support/chain';
import { startFacilitatorFixture, type FacilitatorFixture } from '../support/facilitator';
import { registryFixture } from '../support/registry';
import { paidPost, recordingLogger } from '../support/skill-server';

const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600 } });
let chain: LocalChain;
let facilitator: FacilitatorFixture;
let front: ReturnType<typeof Bun.serve>;
let server: SkillServer;
let creator: Creator;
let payer: TestAccount;
let token: AssetInfo;
let skillId: string;

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
  const payTo = (await chain.createAccount()).address;
  const apiUrl = `http://127.0.0.1:${front.port}`;
  const [registered] = await register(
    { paid },
    { apiKey: creator.key, apiUrl, paymentAddress: payTo, endpoint: 'http://skills.test', network: chain.network },
  );
  skillId = registered!.skillId!;
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
    const price = 10n ** 15n; // $0.001 at 18 decimals (1000 at 6)
    const [record] = await fx.database.db.select().from(skillCalls).where(eq(skillCalls.skillId, skillId));
    expect(record?.amount).toBe(price);
    expect(
      await chain.publicClient.readContract({ address: token.address, abi: usdCoinAbi, functionName: 'balanceOf', args: [payer.address] }),
    ).toBe(10n ** 18n - price);
  });
});
