/**
 * The hold, in the made-up scheme `tally` (test/support/schemes/) between our client, a real serve()
 * skill server and our facilitator, in memory: the facilitator answers a settle `settlement_pending`
 * (a transaction not mined yet) and keeps it pending until the test releases it. The server holds
 * the result and the request, asking the facilitator every few ms, and answers the result once the
 * payment settled; past `holdMs` it answers 409 `payment_pending`, and the client sends the same proof
 * again until it gets the result, within its `pendingTimeoutMs`. Intervals are injected small; the
 * test releases the settle only once the server is seen holding it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test';
import { skill } from 'skill-market/creator';
import { MarketError, PaymentPipeline } from 'skill-market/client';
import { eventually } from '../support/eventually';
import { TALLY_NETWORK } from '../support/schemes/tally';
import { tallyScheme } from '../support/schemes/tally-client';
import {
  countingSigner,
  recordingPipelineFetch,
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
const servers: TallySkillServer[] = [];

beforeAll(async () => {
  facilitator = await startTallyFacilitator();
}, 60_000);
afterEach(async () => {
  facilitator.tally.release();
  for (const served of servers.splice(0)) await served.server.stop();
});
afterAll(() => facilitator?.close());

async function start(holdMs: number) {
  const served = await serveTally(skills, facilitator.url, { holdMs, pollMs: 5 });
  servers.push(served);
  return served;
}

const calls = (from: number) => facilitator.tally.calls.slice(from).filter((c) => c.verb === 'settle');
const pendingSettle = (from: number) => () => calls(from).some((c) => c.answer === 'pending');

describe('a payment whose settlement is pending', () => {
  it('holds the request and answers it the result once the payment settled: one paid request, charged once', async () => {
    const { listing, seller } = await start(10_000);
    const signer = countingSigner();
    const tally = tallyScheme();
    const { fetch, exchanges } = recordingPipelineFetch();
    const pipeline = new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tally], signer, budget: 10_000n, fetch });
    const from = facilitator.tally.calls.length;
    facilitator.tally.hold();

    const call = pipeline.call(listing('echo'), { h: 1 });
    await eventually(pendingSettle(from), Boolean, 'the settle answered pending');
    expect(seller.reported).toEqual([]);
    facilitator.tally.release();
    const { result, receipt } = await call;

    expect(result).toEqual({ echo: { h: 1 } });
    expect(receipt).toMatchObject({ scheme: 'tally', amount: '1000', transaction: null });
    expect(exchanges.map((e) => e.status)).toEqual([402, 200]);
    expect(calls(from)).toEqual([{ verb: 'settle', total: '1000', answer: 'pending' }]);
    expect(seller.reported).toHaveLength(1);
    expect(signer.signatures).toBe(1);
    expect(tally.finished).toEqual([{ total: '1000', charged: 'yes' }]);
    expect(pipeline.spending).toMatchObject({ spent: PRICE, reserved: 0n });
  });

  it('past holdMs answers 409 payment_pending; the client sends the same proof again and gets the result once it settled', async () => {
    const { listing, seller } = await start(20);
    const signer = countingSigner();
    const tally = tallyScheme();
    const { fetch, exchanges } = recordingPipelineFetch();
    const pipeline = new PaymentPipeline({
      network: TALLY_NETWORK,
      schemes: [tally],
      signer,
      budget: 10_000n,
      fetch,
      pendingTimeoutMs: 30_000,
    });
    const from = facilitator.tally.calls.length;
    const before = runs;
    facilitator.tally.hold();

    const call = pipeline.call(listing('echo'), { h: 2 });
    await eventually(
      () => exchanges.filter((e) => e.status === 409).length,
      (n) => n >= 2,
      'two answers 409 to the proof',
    );
    facilitator.tally.release();
    const { result } = await call;

    expect(result).toEqual({ echo: { h: 2 } });
    const statuses = exchanges.map((e) => e.status);
    expect(statuses[0]).toBe(402);
    expect(statuses.at(-1)).toBe(200);
    expect(statuses.slice(1, -1).every((status) => status === 409)).toBe(true);
    expect(new Set(exchanges.slice(1).map((e) => e.proof)).size).toBe(1);
    expect(signer.signatures).toBe(1);
    expect(runs - before).toBe(1);
    expect(calls(from)).toEqual([{ verb: 'settle', total: '1000', answer: 'pending' }]);
    expect(seller.reported).toHaveLength(1);
    expect(tally.finished).toEqual([{ total: '1000', charged: 'yes' }]);
    expect(pipeline.spending).toMatchObject({ spent: PRICE, reserved: 0n });
  });

  it('still pending past the client’s pendingTimeoutMs: payment_pending, charged unknown, the price stays counted', async () => {
    const { listing } = await start(20);
    const tally = tallyScheme();
    const pipeline = new PaymentPipeline({
      network: TALLY_NETWORK,
      schemes: [tally],
      signer: countingSigner(),
      budget: 10_000n,
      pendingTimeoutMs: 150,
    });
    facilitator.tally.hold();

    const error = await pipeline.call(listing('echo'), {}).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(MarketError);
    expect(error).toMatchObject({ code: 'payment_pending', status: 409, charged: 'unknown' });
    expect(tally.finished).toEqual([{ total: '1000', charged: 'unknown' }]);
    expect(pipeline.spending).toMatchObject({ spent: PRICE, reserved: 0n });
  });
});
