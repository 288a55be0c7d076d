/**
 * The registry's count of paid calls checked on chain: a call paid on anvil and reported by its
 * skill server moves `market_payment_checks_total{outcome="verified"}` by one once the chain says
 * so, and nothing before.
 */
import { afterAll, beforeAll, expect, it } from 'bun:test';
import type { Hash } from 'viem';
import { jsonPost } from '../support/auth';
import { json, newCreator } from '../support/catalogue';
import { type LocalChain, startChain, usdCoinAbi } from '../support/chain';
import { sampleValue, scrape } from '../support/metrics';
import { chainVerifier, registryFixture } from '../support/registry';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, payees: 1 });
}, 60_000);
afterAll(() => chain?.stop());

const fx = registryFixture('embedded');

it('counts a reported paid call verified on chain', async () => {
  const creator = await newCreator(fx.request);
  const payTo = await chain.createAccount();
  await creator.prove(payTo);
  const skill = await json(await creator.register({ price: '$0.001', paymentAddress: payTo.address, network: chain.network }));
  const hash: Hash = await chain
    .walletClient(chain.accounts.payer)
    .writeContract({ address: chain.token.address, abi: usdCoinAbi, functionName: 'transfer', args: [payTo.address, 1000n] });
  await chain.publicClient.waitForTransactionReceipt({ hash });
  const before = (await scrape(fx.request)).samples;
  const reported = await fx.request(
    '/analytics/usage',
    jsonPost({ skillSlug: skill.slug, consumerAddress: chain.accounts.payer.address, paymentTxHash: hash, amount: '$0.001' }),
  );
  expect(reported.status).toBe(200);
  expect(await chainVerifier(fx, chain).verifyNow()).toMatchObject({ verified: 1 });
  const after = (await scrape(fx.request)).samples;
  const diff = (outcome: string) =>
    (sampleValue(after, 'market_payment_checks_total', { outcome }) ?? 0) -
    (sampleValue(before, 'market_payment_checks_total', { outcome }) ?? 0);
  expect([diff('verified'), diff('rejected'), diff('retried')]).toEqual([1, 0, 0]);
}, 60_000);
