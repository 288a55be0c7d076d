/**
 * A lost answer, in the made-up scheme `tally` (test/support/schemes/) between our client, a real
 * serve() skill server and our facilitator, in memory: a proxy drops the answer to a paid request
 * after the server ran the handler and had the payment settled. The client sends the same proof
 * again (never a new signature) and the server answers it the stored answer: one run, one settle,
 * charged once. When no answer ever comes, the client cannot say "not charged": the price stays counted.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test';
import { generatePrivateKey } from 'viem/accounts';
import { skill } from 'skill-market/creator';
import { MarketError, PaymentPipeline, toPaymentSigner } from 'skill-market/client';
import { startAnswerDroppingProxy, type AnswerDroppingProxy } from '../client/support/answer-dropping-proxy';
import { TALLY_NETWORK, tallyKey } from '../support/schemes/tally';
import { tallyScheme } from '../support/schemes/tally-client';
import {
  countingSigner,
  serveTally,
  startTallyFacilitator,
  type TallyFacilitatorStack,
  type TallySkillServer,
} from '../support/schemes/tally-stack';

const PRICE = 1_000n;
let facilitator: TallyFacilitatorStack;
let runs = 0;
const skills = {
  echo: skill({ price: '$0.001' }, (input) => {
    runs++;
    return { echo: input };
  }),
};
const opened: { served: TallySkillServer; proxy: AnswerDroppingProxy }[] = [];

beforeAll(async () => {
  facilitator = await startTallyFacilitator();
}, 60_000);
afterEach(async () => {
  for (const { served, proxy } of opened.splice(0)) {
    await proxy.close();
    await served.server.stop();
  }
});
afterAll(() => facilitator?.close());

/** A tally skill server behind a proxy that can drop answers; the listing points at the proxy. */
async function startBehindProxy() {
  const served = await serveTally(skills, facilitator.url);
  const proxy = await startAnswerDroppingProxy(served.server.url);
  opened.push({ served, proxy });
  return { ...served, proxy, skill: served.listing('echo', proxy.url) };
}

const settles = () => facilitator.tally.calls.filter((c) => c.verb === 'settle').length;

describe('an answer lost after the server settled', () => {
  it('is asked for again with the same proof and answered the stored answer: one signature, one run, one settle, charged once', async () => {
    const { proxy, skill: listing, seller, payTo } = await startBehindProxy();
    const tally = tallyScheme();
    const signer = countingSigner();
    const pipeline = new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tally], signer, budget: 10_000n });
    const before = { runs, settles: settles() };
    proxy.drop(1);

    const { result, receipt } = await pipeline.call(listing, { x: 1 });

    expect(result).toEqual({ echo: { x: 1 } });
    expect(receipt).toMatchObject({ scheme: 'tally', amount: '1000' });
    expect(proxy.requests.map((r) => r.status)).toEqual([402, 'dropped', 200]);
    expect(proxy.requests[2]!.proof).toBe(proxy.requests[1]!.proof!);
    expect(signer.signatures).toBe(1);
    expect(runs - before.runs).toBe(1);
    expect(settles() - before.settles).toBe(1);
    expect(seller.reported).toHaveLength(1);
    expect(facilitator.tally.totals.get(tallyKey(signer.address, payTo, receipt!.asset))).toBe(PRICE);
    expect(tally.finished).toEqual([{ total: '1000', charged: 'yes' }]);
    expect(pipeline.spending).toMatchObject({ spent: PRICE, reserved: 0n, remaining: 10_000n - PRICE });
    // The stored answer carried the receipt: the client's tally moved on, and its next call pays the next total.
    expect((await pipeline.call(listing, { x: 2 })).result).toEqual({ echo: { x: 2 } });
    expect(tally.finished.at(-1)).toEqual({ total: '2000', charged: 'yes' });
  });

  it('gives up with network_error when no answer ever comes: charged unknown, the price stays counted, the server ran it once', async () => {
    const { proxy, skill: listing } = await startBehindProxy();
    const tally = tallyScheme();
    const pipeline = new PaymentPipeline({
      network: TALLY_NETWORK,
      schemes: [tally],
      signer: toPaymentSigner(generatePrivateKey()),
      budget: 10_000n,
      retries: 1,
    });
    const before = { runs, settles: settles() };
    proxy.drop(10);

    const error = await pipeline.call(listing, {}).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(MarketError);
    expect(error).toMatchObject({ code: 'network_error', charged: 'unknown' });
    expect(proxy.requests.map((r) => r.status)).toEqual([402, 'dropped', 'dropped']);
    expect(runs - before.runs).toBe(1);
    expect(settles() - before.settles).toBe(1);
    expect(tally.finished).toEqual([{ total: '1000', charged: 'unknown' }]);
    expect(pipeline.spending).toMatchObject({ spent: PRICE, reserved: 0n });
  });
});
