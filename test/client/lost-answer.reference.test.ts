/**
 * A lost answer against the unmodified reference stack (@x402/hono 2.27, @x402/evm exact, the
 * reference facilitator) on the local chain: a proxy drops the answer to a settled call, our
 * client re-sends the same proof, and the reference server, which keeps no replay memory, refuses
 * it with `invalid_exact_evm_nonce_already_used` in its PAYMENT-REQUIRED header and an empty body.
 * The client must not say "not charged": the payee was paid.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { parseEventLogs, type Address } from 'viem';
import { MarketError, type PaidCallError, type Skill } from 'skill-market';
import { decodePaymentRequired } from 'skill-market/x402';
import { usdCoinAbi } from '../support/chain';
import { type AnswerDroppingProxy, startAnswerDroppingProxy } from './support/answer-dropping-proxy';
import { type ReferenceSkill, startReferenceSkill } from './support/reference-server';
import { countingAccount, useWorld } from './support/world';

const world = useWorld({ chain: true });
const PRICE = 10_000n;
const BUDGET = 1_000_000n;
let reference: ReferenceSkill;
let proxy: AnswerDroppingProxy;
let skill: Skill;
/** The same stack reaching its facilitator over HTTP, through a proxy that can lose the facilitator's answers. */
let remote: ReferenceSkill;
let remoteSkill: Skill;

async function register(name: string, endpoint: string, server: ReferenceSkill): Promise<Skill> {
  await world.creator.prove(server.payeeAccount);
  const res = await world.creator.register({ name, endpoint, price: '$0.01', paymentAddress: server.payee, network: world.chain.network });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  return (await res.json()) as Skill;
}

beforeAll(async () => {
  reference = await startReferenceSkill(world.chain, PRICE, { name: 'forecast' });
  proxy = await startAnswerDroppingProxy(new URL(reference.endpoint).origin);
  skill = await register('forecast', `${proxy.url}/forecast`, reference);
  remote = await startReferenceSkill(world.chain, PRICE, {
    name: 'remote-forecast',
    facilitatorOverHttp: true,
    facilitatorTimeoutMs: 3_000,
  });
  remoteSkill = await register('remote-forecast', remote.endpoint, remote);
});

afterAll(async () => {
  await proxy?.close();
  await reference?.stop();
  await remote?.stop();
});

/** Calls once with the answer to the paid request lost; returns the error and what moved. */
async function callLosingTheAnswer(options: { rpcUrl?: string; usdc?: bigint }) {
  const { usdc, ...marketOptions } = options;
  const payer = countingAccount(await world.payer(usdc));
  const market = world.market({ wallet: payer, budget: '$1', ...marketOptions });
  const [payerBefore, payeeBefore] = await Promise.all([world.chain.balanceOf(payer.address), world.chain.balanceOf(reference.payee)]);
  const runsBefore = reference.handlerRuns;
  const start = proxy.requests.length;
  proxy.drop(1);
  const error = await market.call(skill.slug, { city: 'Lyon' }).then(
    () => undefined,
    (e: unknown) => e,
  );
  await market.flush();
  return {
    error: error as PaidCallError,
    market,
    payer,
    seen: proxy.requests.slice(start),
    paid: payerBefore - (await world.chain.balanceOf(payer.address)),
    credited: (await world.chain.balanceOf(reference.payee)) - payeeBefore,
    runs: reference.handlerRuns - runsBefore,
  };
}

describe('an answer lost after the reference server settled', () => {
  it('is reported as charged unknown without an RPC (the refusal is read from PAYMENT-REQUIRED), and the price stays counted', async () => {
    const { error, market, payer, seen, paid, credited, runs } = await callLosingTheAnswer({});

    expect(error).toBeInstanceOf(MarketError);
    expect(error).toMatchObject({ code: 'payment_rejected', status: 402, charged: 'unknown' });
    expect(error.message).toContain('invalid_exact_evm_nonce_already_used');
    // What the reference server said: the reason only in the header, an empty JSON body.
    expect(seen.map((r) => r.status)).toEqual([402, 'dropped', 402]);
    expect(seen[1]!.proof).toBe(seen[2]!.proof!);
    expect(payer.signatures).toBe(1);
    expect(runs).toBe(1);
    // The payee was credited exactly once, and the budget keeps the price.
    expect(paid).toBe(PRICE);
    expect(credited).toBe(PRICE);
    expect(market.spending).toEqual({ spent: PRICE, reserved: 0n, budget: BUDGET, remaining: BUDGET - PRICE });
  });

  it('is reported as charged yes with the transaction that paid when rpcUrl is set', async () => {
    const { error, market, payer, paid, credited } = await callLosingTheAnswer({ rpcUrl: world.chain.rpcUrl });

    expect(error).toMatchObject({ code: 'payment_rejected', status: 402, charged: 'yes' });
    expect(error.receipt).toMatchObject({ payer: payer.address, payTo: reference.payee, amount: PRICE.toString() });
    const hash = error.receipt!.transaction;
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    const receipt = await world.chain.publicClient.getTransactionReceipt({ hash: hash! });
    const transfers = parseEventLogs({ abi: usdCoinAbi, eventName: 'Transfer', logs: receipt.logs });
    expect(transfers.map((t) => t.args)).toEqual([{ from: payer.address, to: reference.payee as Address, value: PRICE }]);
    expect(paid).toBe(PRICE);
    expect(credited).toBe(PRICE);
    expect(market.spending).toMatchObject({ spent: PRICE, reserved: 0n, remaining: BUDGET - PRICE });
    // The paid call is recorded with the registry under that transaction.
    expect((await world.usage(skill.id)).map((u) => u.paymentRef)).toContain(hash);
  });

  it('gets its refusal reason from the header: the reference body is empty', async () => {
    const payer = await world.payer();
    const market = world.market({ wallet: payer });
    // A second proof for a used authorization is what the client re-sent above; ask the server directly.
    proxy.drop(1);
    await market.call(skill.slug, { city: 'Nice' }).catch(() => undefined);
    const last = proxy.requests.at(-1)!;
    const answer = await fetch(reference.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'PAYMENT-SIGNATURE': last.proof! },
      body: JSON.stringify({ city: 'Nice' }),
    });
    expect(answer.status).toBe(402);
    expect(await answer.text()).toBe('{}');
    expect(decodePaymentRequired(answer.headers.get('PAYMENT-REQUIRED')!).error).toBe('invalid_exact_evm_nonce_already_used');
  });
});

describe('a settlement whose answer the reference server lost on the way from its facilitator', () => {
  it('is reported as charged unknown without an RPC and yes with the transaction with one, not as a refusal: the payee was paid', async () => {
    for (const rpcUrl of [undefined, world.chain.rpcUrl]) {
      const payer = countingAccount(await world.payer());
      const market = world.market({ wallet: payer, budget: '$1', ...(rpcUrl ? { rpcUrl } : {}) });
      const payeeBefore = await world.chain.balanceOf(remote.payee);
      remote.facilitatorProxy!.drop(1, '/settle');

      const error = (await market.call(remoteSkill.slug, { city: 'Brest' }).catch((e: unknown) => e)) as PaidCallError;

      // The reference server answers 402 with a failed settlement receipt (PAYMENT-RESPONSE) and an empty body.
      expect(error).toBeInstanceOf(MarketError);
      expect(error).toMatchObject({ code: 'payment_rejected', status: 402, charged: rpcUrl ? 'yes' : 'unknown' });
      expect(error.message).toContain('the transfer may have been sent');
      expect(remote.facilitatorProxy!.requests.at(-1)).toMatchObject({ path: '/settle', status: 'dropped' });
      expect(await world.chain.balanceOf(remote.payee)).toBe(payeeBefore + PRICE);
      expect(market.spending).toMatchObject({ spent: PRICE, reserved: 0n, remaining: BUDGET - PRICE });
      if (rpcUrl) expect(error.receipt!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(payer.signatures).toBe(1);
    }
  });

  it('is reported as charged unknown without an RPC and yes with one when the facilitator timed out and the server answered 502', async () => {
    for (const rpcUrl of [undefined, world.chain.rpcUrl]) {
      const payer = await world.payer();
      const market = world.market({ wallet: payer, budget: '$1', ...(rpcUrl ? { rpcUrl } : {}) });
      const payeeBefore = await world.chain.balanceOf(remote.payee);
      remote.facilitatorProxy!.drop(1, '/settle', 'hold');

      const error = (await market.call(remoteSkill.slug, { city: 'Caen' }).catch((e: unknown) => e)) as PaidCallError;

      expect(error).toBeInstanceOf(MarketError);
      expect(error).toMatchObject({ status: 502, charged: rpcUrl ? 'yes' : 'unknown' });
      expect(await world.chain.balanceOf(remote.payee)).toBe(payeeBefore + PRICE);
      expect(market.spending).toMatchObject({ spent: PRICE, reserved: 0n, remaining: BUDGET - PRICE });
      if (rpcUrl) expect(error.receipt!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    }
  });
});
