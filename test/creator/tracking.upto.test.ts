/**
 * Usage-based payments counted by the registry: a skill server's `upto` call reaches the registry
 * like any paid call, and the payment check reads what the chain moved through the upto proxy (the
 * handler's charge, less than the listed maximum) as the call's revenue. A plain transfer of less
 * than the price, not settled through the proxy, counts for nothing. The payer's own history shows
 * the call as `upto` once its check found the settlement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { x402Client } from '@x402/core/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { eq } from 'drizzle-orm';
import type { Address, Hex } from 'viem';
import { register, serve, skill, type SkillServer } from 'skill-market/creator';
import { paymentVerifications, webhookDeliveries } from '../../src/db/schema';
import type { PaymentVerifier } from '../../src/registry/modules/payment-verification';
import { privateKeyToAccount } from 'viem/accounts';
import { bearer, createKey, jsonPost, walletSignIn } from '../support/auth';
import { json, type Creator } from '../support/catalogue';
import type { TestAccount } from '../support/chain';
import { usdCoinAbi } from '../support/chain/abi';
import { approvePermit2 } from '../support/chain/upto';
import { registryFixture } from '../support/registry';
import { type CreatorStack, startCreatorStack } from '../support/creator-stack';
import { loopbackServeOptions, type PaymentStack } from '../support/skill-server';
import { addEndpoint } from '../support/webhooks';

const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
let stack: PaymentStack;
let creator: Creator;
let payee: Address;
let verifier: PaymentVerifier;
let server: SkillServer;
let skillId: string;
let world: CreatorStack;

beforeAll(async () => {
  world = await startCreatorStack(fx);
  ({ stack, creator, payee, verifier } = world);
  const apiUrl = world.apiUrl;
  const skills = {
    metered: skill({ price: '$0.01', upto: true, groups: ['tools'] }, (input: { units: number }, { charge }) => {
      charge(BigInt(input.units) * 100n);
      return { units: input.units };
    }),
  };
  const [registered] = await register(skills, {
    apiKey: creator.key,
    apiUrl,
    paymentAddress: payee,
    endpoint: 'http://skills.test',
    network: stack.chain.network,
  });
  if (!registered?.skillId) throw new Error(`register: ${JSON.stringify(registered)}`);
  skillId = registered.skillId;
  await addEndpoint(fx.request, creator.token, 'https://hooks.example/calls');
  server = await serve(
    skills,
    loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
      apiKey: creator.key,
      apiUrl,
      trackCalls: { baseDelayMs: 50, maxDelayMs: 200 },
    }),
  );
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await world?.close();
});

/** A payer holding 100,000 atomic units who approved Permit2, paying with @x402/evm's upto client. */
async function uptoPayer() {
  const payer = await stack.chain.createAccount({ usdc: 100_000n });
  await approvePermit2(stack.chain, payer);
  const client = new x402Client().register(stack.chain.network, new UptoEvmScheme(payer));
  client.setSpendControls({ allowedAssets: [{ network: stack.chain.network, asset: stack.chain.token.address }] });
  return { payer, pay: wrapFetchWithPayment(fetch, client) };
}

const analytics = async () => {
  const res = await fx.request(`/analytics/${skillId}`, { headers: bearer(creator.key) });
  const body = await json<{ callCount: number; totalRevenueAtomic: string }>(res);
  if (res.status !== 200) throw new Error(`analytics: ${res.status} ${JSON.stringify(body)}`);
  return body;
};

describe('usage-based calls in the registry', () => {
  it('counts an upto call once its payment is checked, for what the chain moved: the charge, not the maximum', async () => {
    const before = await analytics();
    const payeeBefore = await stack.chain.balanceOf(payee);
    const { payer, pay } = await uptoPayer();
    const res = await pay(`${server.url}/metered`, jsonPost({ units: 37 }));
    expect(res.status).toBe(200);
    // The payer keeps a usage record of the call, naming its settlement.
    const { transaction } = JSON.parse(atob(res.headers.get('payment-response')!)) as { transaction: string };
    const buyer = await walletSignIn(fx.request, privateKeyToAccount(payer.privateKey));
    const { key: buyerKey } = await createKey(fx.request, buyer.token, 'consumer');
    const usage = await fx.request(
      '/analytics/usage',
      jsonPost({ skillId, paymentRef: transaction, amountAtomic: '3700' }, bearer(buyerKey)),
    );
    expect(usage.status).toBeLessThan(300);
    expect(await stack.chain.balanceOf(payer.address)).toBe(100_000n - 3_700n);
    expect(await server.flushCalls()).toBe(true);
    await verifier.verifyNow();

    const after = await analytics();
    expect(after.callCount).toBe(before.callCount + 1);
    expect(BigInt(after.totalRevenueAtomic) - BigInt(before.totalRevenueAtomic)).toBe(3_700n);
    expect((await stack.chain.balanceOf(payee)) - payeeBefore).toBe(3_700n);
    const checks = await fx.database.db.select().from(paymentVerifications).where(eq(paymentVerifications.skillId, skillId));
    expect(checks.map((c) => ({ status: c.status, amount: c.amount, payer: c.payer }))).toEqual([
      { status: 'verified', amount: 3_700n, payer: payer.address },
    ]);
    const history = await json<{ scheme: string; amountAtomic: string; verification: string }[]>(
      await fx.request('/analytics/usage', { headers: bearer(buyerKey) }),
    );
    expect(history).toEqual([expect.objectContaining({ scheme: 'upto', amountAtomic: '3700', verification: 'verified' })]);
    // The creator's books keep the usage-based settlements apart from exact payments.
    const csv = await (await fx.request('/analytics/revenue.csv', { headers: bearer(creator.key) })).text();
    const [header, line] = csv.trimEnd().split('\r\n');
    const columns = Object.fromEntries(header!.split(',').map((name, i) => [name, line!.split(',')[i]]));
    expect(columns).toMatchObject({ skill: 'metered', paid_calls: '1', revenue_atomic: '3700', exact_atomic: '0', upto_atomic: '3700' });
    // The creator's call.paid says how it was paid and what it moved.
    const deliveries = await fx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.type, 'call.paid'));
    expect(deliveries.map((d) => (d.payload as { data: { scheme: string; amount: string } }).data)).toEqual([
      expect.objectContaining({ scheme: 'upto', amount: '3700', payer: payer.address }),
    ]);
  });

  it('counts nothing for a plain transfer of less than the price that no upto settlement made', async () => {
    const before = await analytics();
    const payer: TestAccount = await stack.chain.createAccount({ usdc: 100_000n });
    const hash: Hex = await stack.chain.walletClient(payer).writeContract({
      address: stack.chain.token.address,
      abi: usdCoinAbi,
      functionName: 'transfer',
      args: [payee, 3_700n],
    });
    await stack.chain.publicClient.waitForTransactionReceipt({ hash });
    const res = await fx.request(
      '/analytics/calls',
      jsonPost({ calls: [{ skillId, paymentRef: hash, amountAtomic: '3700' }] }, bearer(creator.key)),
    );
    expect({ status: res.status, body: await res.json() }).toMatchObject({ status: 200 });
    await verifier.verifyNow();
    const [check] = await fx.database.db.select().from(paymentVerifications).where(eq(paymentVerifications.txHash, hash.toLowerCase()));
    expect(check).toMatchObject({ status: 'rejected', reason: 'the transfer is 3700 atomic units, the listed price is 10000' });
    expect((await analytics()).callCount).toBe(before.callCount);
  });
});
