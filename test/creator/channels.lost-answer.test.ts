/**
 * A channel call whose answer is lost on the way (a proxy closes the client's connection after our
 * skill server answered and wrote the charge) is answered with its result when the same voucher
 * comes again for the same input: charged once, the handler run once, whatever the client. Our
 * client re-sends the proof by itself; the reference client (@x402/fetch with @x402/evm's
 * batch-settlement scheme) signs the same voucher again when the caller retries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { decodePaymentRequired } from 'skill-market/x402';
import { jsonPost } from '../support/auth';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import { referenceChannelClient } from '../support/channel-server';
import { loopbackServeOptions } from '../support/skill-server';
import { type AnswerDroppingProxy, startAnswerDroppingProxy } from '../client/support/answer-dropping-proxy';
import { useWorld } from '../client/support/world';

const world = useWorld({ chain: true });
const PRICE = 1_000n; // $0.001
let facilitator: ReturnType<typeof startBatchFacilitator>;
let folder: string;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  facilitator = startBatchFacilitator(world.chain, await world.chain.createAccount(), await world.chain.createAccount());
  folder = await mkdtemp(join(tmpdir(), 'channel-lost-answer-'));
}, 60_000);

afterAll(async () => {
  for (const close of closers) await close();
  facilitator?.stop();
  await rm(folder, { recursive: true, force: true });
});

/** Our server selling `tick` over channels behind an answer-dropping proxy, listed under the proxy's URL. */
async function proxiedSkill() {
  const payee = await world.payee();
  const name = `tick-${crypto.randomUUID().slice(0, 8)}`;
  const state = {
    runs: 0,
    payee,
    name,
    slug: '',
    server: undefined as unknown as SkillServer,
    proxy: undefined as unknown as AnswerDroppingProxy,
  };
  state.server = await serve(
    {
      [name]: skill({ price: '$0.001' }, (input: { i: number }) => {
        state.runs++;
        return { i: input.i, run: state.runs };
      }),
    },
    loopbackServeOptions(world.chain, facilitator.url, payee, { asset: world.asset, channels: { store: join(folder, name) } }),
  );
  state.proxy = await startAnswerDroppingProxy(state.server.url);
  closers.push(
    () => state.server.stop(),
    () => state.proxy.close(),
  );
  const res = await world.creator.register({
    name,
    endpoint: state.proxy.url,
    price: '$0.001',
    paymentAddress: payee,
    network: world.chain.network,
    groups: [world.group],
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  state.slug = ((await res.json()) as { slug: string }).slug;
  return state;
}

/** The statuses the proxy saw for each proof, in order of first sight. */
const byProof = (requests: AnswerDroppingProxy['requests']) => {
  const seen = new Map<string, (number | 'dropped')[]>();
  for (const r of requests) if (r.proof) seen.set(r.proof, [...(seen.get(r.proof) ?? []), r.status]);
  return [...seen.values()];
};

describe('a channel call whose answer was lost', () => {
  it('our client re-sends the proof and gets the result the server charged for, the deposit’s and a voucher’s alike', async () => {
    const tick = await proxiedSkill();
    const market = world.market({ wallet: await world.payer(1_000_000n), payment: 'channel', maxDeposit: '$0.01' });

    tick.proxy.drop(1); // the deposit's answer
    expect(await market.callWithReceipt(tick.slug, { i: 1 })).toMatchObject({
      result: { i: 1, run: 1 },
      receipt: { scheme: 'batch-settlement' },
    });
    tick.proxy.drop(1); // a voucher's answer
    expect(await market.call(tick.slug, { i: 2 })).toEqual({ i: 2, run: 2 });
    expect(await market.call(tick.slug, { i: 3 })).toEqual({ i: 3, run: 3 });

    // Each lost answer's proof came once more and was answered; the handler ran once per call.
    expect(byProof(tick.proxy.requests)).toEqual([['dropped', 200], ['dropped', 200], [200]]);
    expect(tick.runs).toBe(3);
    const [channel] = await market.channels();
    expect(channel!.charged).toBe(String(3n * PRICE));
    await tick.server.claimChannels();
    expect(await world.chain.balanceOf(tick.payee)).toBe(3n * PRICE);
  }, 60_000);

  it('the reference client, retried by its caller, signs the same voucher and gets the stored result', async () => {
    const tick = await proxiedSkill();
    const payer = await world.payer(1_000_000n);
    const { pay, proofs } = referenceChannelClient(world.chain, payer, { depositMultiplier: 10 });
    const url = `${tick.proxy.url}/${tick.name}`;

    expect(await (await pay(url, jsonPost({ i: 1 }))).json()).toMatchObject({ result: { i: 1, run: 1 } });
    tick.proxy.drop(1);
    await expect(pay(url, jsonPost({ i: 2 }))).rejects.toThrow();
    const again = await pay(url, jsonPost({ i: 2 }));
    expect(again.status).toBe(200);
    expect(again.headers.get('X-Payment-Replayed')).toBe('true');
    expect(await again.json()).toMatchObject({ result: { i: 2, run: 2 } });
    expect(await (await pay(url, jsonPost({ i: 3 }))).json()).toMatchObject({ result: { i: 3, run: 3 } });
    expect(tick.runs).toBe(3);

    // The same voucher for another input is not a resend: it gets the corrective 402, nothing runs.
    const other = await fetch(url, jsonPost({ i: 4 }, { 'PAYMENT-SIGNATURE': proofs.at(-1)! }));
    expect(other.status).toBe(402);
    expect(decodePaymentRequired(other.headers.get('PAYMENT-REQUIRED')!).error).toBe(
      'invalid_batch_settlement_evm_cumulative_amount_mismatch',
    );
    expect(tick.runs).toBe(3);
    await tick.server.claimChannels();
    expect(await world.chain.balanceOf(tick.payee)).toBe(3n * PRICE);
  }, 60_000);
});
