/**
 * The whole paid call on a local chain: registry listing → 402 → terms check → EIP-3009 proof →
 * our facilitator settles → result and receipt; exactly the price moves, usage is recorded.
 */
import { describe, expect, it } from 'bun:test';
import { decodePaymentPayload, formatPriceUsd } from 'skill-market/x402';
import { MarketError, type PaidCallError, SkillCallError } from 'skill-market';
import { countingAccount, NETWORK, useWorld } from './support/world';

const world = useWorld({ chain: true });
const PRICE = 10_000n;

const requestsTo = (slug: string) => world.server.requests.filter((r) => r.skill === slug);

describe('a paid call', () => {
  it('returns the handler result, moves exactly the price from payer to payTo, and hands back the receipt', async () => {
    const skill = await world.addSkill({ handler: (input) => ({ doubled: (input as { n: number }).n * 2 }) });
    const payer = await world.payer();
    const [payerBefore, payeeBefore] = await Promise.all([world.chain.balanceOf(payer.address), world.chain.balanceOf(skill.payTo)]);

    const market = world.market({ wallet: payer });
    const { result, receipt } = await market.callWithReceipt(skill.slug, { n: 21 });

    expect(result).toEqual({ doubled: 42 });
    expect(receipt).toMatchObject({
      skillId: skill.id,
      slug: skill.slug,
      amount: '10000',
      price: '$0.01',
      payTo: skill.payTo,
      network: NETWORK,
      payer: payer.address,
      asset: world.asset.address,
    });
    expect(receipt!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await world.chain.balanceOf(payer.address)).toBe(payerBefore - PRICE);
    expect(await world.chain.balanceOf(skill.payTo)).toBe(payeeBefore + PRICE);
    expect(market.spending).toMatchObject({ spent: PRICE, reserved: 0n });

    const [unpaid, paid] = requestsTo(skill.name);
    expect(unpaid).toMatchObject({ proof: null, status: 402 });
    expect(paid).toMatchObject({ status: 200 });
    expect(paid!.xPayment).toBe(paid!.paymentSignature);
    expect(decodePaymentPayload(paid!.xPayment!).authorization.nonce).toBe(receipt!.nonce);
  });

  it('call() resolves to the result alone and records usage with paymentRef = the transaction', async () => {
    const skill = await world.addSkill();
    const market = world.market({ wallet: await world.payer() });
    const receipts: string[] = [];
    const first = await market.callWithReceipt(skill.slug, { hello: 'world' });
    receipts.push(first.receipt!.transaction!);
    expect(await market.call(skill.slug, { hello: 'again' })).toEqual({ echo: { hello: 'again' } });
    await market.flush();
    const usage = await world.usage(skill.id);
    expect(usage).toHaveLength(2);
    expect(usage.map((u) => u.amount)).toEqual([PRICE, PRICE]);
    expect(usage.map((u) => u.paymentRef)).toContain(receipts[0]!);
  });

  it('without an API key, still reports each payment for the registry to check on chain (and keeps no account history)', async () => {
    const skill = await world.addSkill();
    const market = world.market({ wallet: await world.payer(), apiKey: undefined as unknown as string });
    const { receipt } = await market.callWithReceipt(skill.slug, { hello: 'anonymous' });
    await market.flush();
    expect(await world.reported(skill.id)).toEqual([{ txHash: receipt!.transaction!.toLowerCase(), status: 'pending' }]);
    expect(await world.usage(skill.id)).toHaveLength(0);
  });

  it('pays a server that sends only the documented 402 body (no PAYMENT-REQUIRED header)', async () => {
    const skill = await world.addSkill({ terms: 'body' });
    const payer = await world.payer();
    const before = await world.chain.balanceOf(skill.payTo);
    expect(await world.market({ wallet: payer }).call(skill.slug, { a: 1 })).toEqual({ echo: { a: 1 } });
    expect(await world.chain.balanceOf(skill.payTo)).toBe(before + PRICE);
  });

  it('turns a handler error into SkillCallError with the skill message; nothing moves and the budget is released', async () => {
    const skill = await world.addSkill({
      handler: () => {
        throw new Error('the oracle is closed today');
      },
    });
    const payer = await world.payer();
    const before = await world.chain.balanceOf(payer.address);
    const market = world.market({ wallet: payer, budget: '$1' });
    const error = await market.call(skill.slug, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SkillCallError);
    expect(error).toMatchObject({
      code: 'skill_failed',
      message: 'the oracle is closed today',
      status: 500,
      charged: 'no',
      receipt: undefined,
    });
    expect(await world.chain.balanceOf(payer.address)).toBe(before);
    expect(market.spending).toMatchObject({ spent: 0n, reserved: 0n, remaining: 1_000_000n });
    await market.flush();
    expect(await world.usage(skill.id)).toHaveLength(0);
  });
});

describe('a listing that changed while cached', () => {
  async function reprice(slug: string, name: string, price: bigint) {
    const res = await fetch(`${world.registryUrl}/skills/${slug}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${world.creator.key}` },
      body: JSON.stringify({ price: formatPriceUsd(price) }),
    });
    expect(res.status).toBe(200);
    world.server.skills.get(name)!.price = price;
  }

  it('re-checks 402 terms that differ from the cached listing against a fresh one, and pays the new price', async () => {
    const skill = await world.addSkill();
    const market = world.market({ wallet: await world.payer() });
    const before = await world.chain.balanceOf(skill.payTo);
    await market.call(skill.slug, {});
    await reprice(skill.slug, skill.name, 20_000n);
    const { receipt } = await market.callWithReceipt(skill.slug, {});
    expect(receipt).toMatchObject({ amount: '20000', price: '$0.02' });
    expect(await world.chain.balanceOf(skill.payTo)).toBe(before + 30_000n);
  });

  it('applies maxPrice to the fresh listing before signing', async () => {
    const skill = await world.addSkill();
    const payer = countingAccount(await world.payer());
    const market = world.market({ wallet: payer, maxPrice: '$0.015' });
    await market.call(skill.slug, {});
    await reprice(skill.slug, skill.name, 20_000n);
    const error = await market.call(skill.slug, {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'max_price_exceeded', price: 20_000n });
    expect(payer.signatures).toBe(1);
  });

  it('in fast mode, re-signs the fresh price with the same nonce and holds exactly the new price of the budget', async () => {
    const skill = await world.addSkill();
    const market = world.market({ wallet: await world.payer(), mode: 'fast', budget: '$1' });
    await market.call(skill.slug, {});
    await reprice(skill.slug, skill.name, 20_000n);
    const { receipt } = await market.callWithReceipt(skill.slug, {});
    const [, refused, paid] = requestsTo(skill.name);
    expect([refused!.status, paid!.status]).toEqual([402, 200]);
    expect(decodePaymentPayload(refused!.proof!).authorization.nonce).toBe(receipt!.nonce);
    expect(market.spending).toMatchObject({ spent: 30_000n, reserved: 0n });
  });
});

describe('fast mode (proof with the first request)', () => {
  it('pays in one round trip when the listing gives the terms', async () => {
    const skill = await world.addSkill();
    const payer = await world.payer();
    const before = await world.chain.balanceOf(skill.payTo);
    const { result, receipt } = await world.market({ wallet: payer, mode: 'fast' }).callWithReceipt(skill.slug, { q: 1 });
    expect(result).toEqual({ echo: { q: 1 } });
    expect(receipt!.transaction).toMatch(/^0x/);
    expect(requestsTo(skill.name)).toHaveLength(1);
    expect(await world.chain.balanceOf(skill.payTo)).toBe(before + PRICE);
  });

  it('falls back to the 402 terms when they differ, re-signing with the same nonce; later calls reuse the learned terms', async () => {
    const skill = await world.addSkill({ tamper: () => ({ maxTimeoutSeconds: 120 }) });
    const payer = countingAccount(await world.payer());
    const before = await world.chain.balanceOf(skill.payTo);
    const market = world.market({ wallet: payer, mode: 'fast' });

    expect(await market.call(skill.slug, { n: 1 })).toEqual({ echo: { n: 1 } });
    const [first, second] = requestsTo(skill.name);
    expect(first!.status).toBe(402);
    expect(second!.status).toBe(200);
    const [a, b] = [decodePaymentPayload(first!.proof!), decodePaymentPayload(second!.proof!)];
    expect(a.authorization.nonce).toBe(b.authorization.nonce);
    expect(b.accepted!.maxTimeoutSeconds).toBe(120);
    expect(payer.signatures).toBe(2);

    expect(await market.call(skill.slug, { n: 2 })).toEqual({ echo: { n: 2 } });
    expect(requestsTo(skill.name)).toHaveLength(3);
    expect(await world.chain.balanceOf(skill.payTo)).toBe(before + 2n * PRICE);
  });
});

describe('retries without double payment', () => {
  it('re-sends the same proof after the connection drops and gets the stored answer: one signature, one transfer', async () => {
    const skill = await world.addSkill({ dropAfterSettle: 1 });
    const payer = countingAccount(await world.payer());
    const before = await world.chain.balanceOf(payer.address);
    const runs = world.server.handlerRuns;

    const { result, receipt } = await world.market({ wallet: payer }).callWithReceipt(skill.slug, { x: 1 });

    expect(result).toEqual({ echo: { x: 1 } });
    const seen = requestsTo(skill.name);
    expect(seen.map((r) => r.status)).toEqual([402, 'dropped', 200]);
    expect(seen[1]!.proof).toBe(seen[2]!.proof!);
    expect(payer.signatures).toBe(1);
    expect(world.server.handlerRuns - runs).toBe(1);
    expect(await world.chain.balanceOf(payer.address)).toBe(before - PRICE);
    expect(receipt!.transaction).toMatch(/^0x/);
  });

  it('gives up with network_error, charged unknown, and counts the price as spent when no answer ever comes', async () => {
    const skill = await world.addSkill({ dropAfterSettle: 10 });
    const payer = countingAccount(await world.payer());
    const market = world.market({ wallet: payer, retries: 1, budget: '$1' });
    const error = await market.call(skill.slug, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MarketError);
    expect(error).toMatchObject({ code: 'network_error', charged: 'unknown' });
    expect(payer.signatures).toBe(1);
    expect(market.spending).toMatchObject({ spent: PRICE, reserved: 0n });
    // With an RPC the chain says the authorization was used: charged yes, not a guess.
    const withChain = world.market({ wallet: payer, retries: 1, rpcUrl: world.chain.rpcUrl });
    expect(await withChain.call(skill.slug, { again: true }).catch((e: unknown) => e)).toMatchObject({
      code: 'network_error',
      charged: 'yes',
      receipt: { payer: payer.address },
    });
  });
});

describe('payments the server reports pending or cannot vouch for', () => {
  it('re-sends the same proof while the server answers payment pending, then returns the result: one signature, one transfer', async () => {
    const skill = await world.addSkill({ pending: { answers: 2, settleFirst: true } });
    const payer = countingAccount(await world.payer());
    const before = await world.chain.balanceOf(payer.address);
    const market = world.market({ wallet: payer, budget: '$1' });

    const { result, receipt } = await market.callWithReceipt(skill.slug, { p: 1 });

    expect(result).toEqual({ echo: { p: 1 } });
    expect(receipt!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const seen = requestsTo(skill.name);
    expect(seen.map((r) => r.status)).toEqual([402, 409, 409, 200]);
    expect(new Set(seen.slice(1).map((r) => r.proof)).size).toBe(1);
    expect(payer.signatures).toBe(1);
    expect(await world.chain.balanceOf(payer.address)).toBe(before - PRICE);
    expect(market.spending).toMatchObject({ spent: PRICE, reserved: 0n });
  });

  it('gives up after pendingTimeoutMs with payment_pending: charged unknown without an RPC, yes with one when the transfer happened; the price stays counted', async () => {
    const skill = await world.addSkill({ pending: { answers: 1_000, settleFirst: true } });
    const payer = countingAccount(await world.payer());
    const before = await world.chain.balanceOf(payer.address);
    const blind = world.market({ wallet: payer, budget: '$1', pendingTimeoutMs: 300 });
    const error = await blind.call(skill.slug, { q: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MarketError);
    expect(error).toMatchObject({ code: 'payment_pending', status: 409, charged: 'unknown' });
    expect(blind.spending).toMatchObject({ spent: PRICE, reserved: 0n });
    expect(await world.chain.balanceOf(payer.address)).toBe(before - PRICE);

    const seeing = world.market({ wallet: payer, budget: '$1', pendingTimeoutMs: 300, rpcUrl: world.chain.rpcUrl });
    expect(await seeing.call(skill.slug, { q: 2 }).catch((e: unknown) => e)).toMatchObject({
      code: 'payment_pending',
      charged: 'yes',
      receipt: { payer: payer.address, amount: '10000' },
    });
    expect(seeing.spending).toMatchObject({ spent: PRICE, reserved: 0n });
  });

  it('says unknown, not no, for a pending payment the chain has not seen yet', async () => {
    const skill = await world.addSkill({ pending: { answers: 1_000, settleFirst: false } });
    const payer = await world.payer();
    const market = world.market({ wallet: payer, budget: '$1', pendingTimeoutMs: 200, rpcUrl: world.chain.rpcUrl });
    expect(await market.call(skill.slug, {}).catch((e: unknown) => e)).toMatchObject({ code: 'payment_pending', charged: 'unknown' });
    expect(market.spending).toMatchObject({ spent: PRICE, reserved: 0n });
  });

  it('treats "nonce already used" for a re-sent proof (a server without replay memory) as maybe charged: unknown without an RPC, yes with one', async () => {
    const skill = await world.addSkill({ dropAfterSettle: 2, forgetful: true });
    const payer = countingAccount(await world.payer());
    const before = await world.chain.balanceOf(payer.address);
    const blind = world.market({ wallet: payer, budget: '$1' });
    const error = await blind.call(skill.slug, { r: 1 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'payment_rejected', status: 402, charged: 'unknown' });
    expect((error as MarketError).message).toContain('invalid_exact_evm_nonce_already_used');
    expect(requestsTo(skill.name).map((r) => r.status)).toEqual([402, 'dropped', 402]);
    expect(await world.chain.balanceOf(payer.address)).toBe(before - PRICE);
    expect(blind.spending).toMatchObject({ spent: PRICE, reserved: 0n });

    const seeing = world.market({ wallet: payer, budget: '$1', rpcUrl: world.chain.rpcUrl });
    expect(await seeing.call(skill.slug, { r: 2 }).catch((e: unknown) => e)).toMatchObject({ code: 'payment_rejected', charged: 'yes' });
    expect(await world.chain.balanceOf(payer.address)).toBe(before - 2n * PRICE);
    expect(payer.signatures).toBe(2);
  });

  it('reads the reason of a legacy x402 v1 refusal body ({x402Version: 1, error, accepts}) of a re-sent proof: unknown without an RPC, yes with the transaction with one', async () => {
    const skill = await world.addSkill({ dropAfterSettle: 2, forgetful: true, v1Refusals: true });
    const payer = countingAccount(await world.payer());
    const blind = world.market({ wallet: payer, budget: '$1' });
    const error = await blind.call(skill.slug, { v: 1 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'payment_rejected', status: 402, charged: 'unknown' });
    expect((error as MarketError).message).toContain('invalid_exact_evm_nonce_already_used');
    expect((error as MarketError).body).toContain('"x402Version":1');
    expect(requestsTo(skill.name).map((r) => r.status)).toEqual([402, 'dropped', 402]);
    expect(blind.spending).toMatchObject({ spent: PRICE, reserved: 0n });

    const seeing = world.market({ wallet: payer, budget: '$1', rpcUrl: world.chain.rpcUrl });
    const seen = (await seeing.call(skill.slug, { v: 2 }).catch((e: unknown) => e)) as PaidCallError;
    expect(seen).toMatchObject({ code: 'payment_rejected', charged: 'yes', receipt: { payer: payer.address } });
    expect(seen.receipt!.transaction).toBe(world.server.settlements.at(-1)!.transaction as `0x${string}`);
    expect(seeing.spending).toMatchObject({ spent: PRICE, reserved: 0n });
    expect(payer.signatures).toBe(2);
  });
});

describe('budget under concurrency', () => {
  it('lets exactly as many parallel calls through as the budget covers; the rest are refused before signing', async () => {
    const skill = await world.addSkill();
    const payer = countingAccount(await world.payer());
    const before = await world.chain.balanceOf(skill.payTo);
    const market = world.market({ wallet: payer, budget: '$0.03', mode: 'fast' });

    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => market.call(skill.slug, { i })));

    const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason as MarketError);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
    expect(refused.map((e) => e.code)).toEqual(['budget_exceeded', 'budget_exceeded']);
    expect(payer.signatures).toBe(3);
    expect(market.spending).toEqual({ spent: 3n * PRICE, reserved: 0n, budget: 3n * PRICE, remaining: 0n });
    expect(await world.chain.balanceOf(skill.payTo)).toBe(before + 3n * PRICE);
  });
});
