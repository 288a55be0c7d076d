/**
 * A paid call through all three pipelines in a made-up scheme (`tally`, test/support/schemes/),
 * in memory and over real HTTP: our client's PaymentPipeline, a real serve() skill server and our
 * facilitator, each with tally plugged in through its scheme interface. The 402 offers tally after
 * the server's own `exact`; the client pays the scheme it prefers; the server has it verified,
 * runs the handler once and has it settled; the client is told what it cost. And the ways a call
 * ends without a charge before anything is settled: a handler error, input the skill refuses.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test';
import { generatePrivateKey } from 'viem/accounts';
import { createSkillHandler, ServeConfigError, skill } from 'skill-market/creator';
import { MarketError, PaymentPipeline, SkillCallError, toPaymentSigner } from 'skill-market/client';
import { decodePaymentRequired } from 'skill-market/x402';
import { TALLY_NETWORK, tallyKey } from '../support/schemes/tally';
import { tallySeller } from '../support/schemes/tally-server';
import { tallyScheme } from '../support/schemes/tally-client';
import {
  recordingPipelineFetch,
  serveTally,
  startTallyFacilitator,
  type TallyFacilitatorStack,
  type TallySkillServer,
} from '../support/schemes/tally-stack';

const PRICE = 1_000n;
let facilitator: TallyFacilitatorStack;
const servers: TallySkillServer[] = [];
let runs = 0;
const skills = {
  echo: skill({ price: '$0.001', description: 'Echoes its input' }, (input) => {
    runs++;
    return { echo: input };
  }),
  fails: skill({ price: '$0.001' }, () => {
    runs++;
    throw new Error('the well is dry');
  }),
  strict: skill({ price: '$0.001', inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } }, (input) => {
    runs++;
    return input;
  }),
};

beforeAll(async () => {
  facilitator = await startTallyFacilitator();
}, 60_000);
afterEach(async () => {
  for (const served of servers.splice(0)) await served.server.stop();
});
afterAll(() => facilitator?.close());

async function start() {
  const served = await serveTally(skills, facilitator.url);
  servers.push(served);
  return served;
}

const settles = () => facilitator.tally.calls.filter((c) => c.verb === 'settle');

describe('a paid call in a scheme plugged into all three sides', () => {
  it('lists tally after the server’s own scheme in the 402; the client pays it, the facilitator verifies and settles it once, and the receipt names no transaction', async () => {
    const { server, seller, payTo, listing } = await start();
    const unpaid = await fetch(`${server.url}/echo`, { method: 'POST' });
    expect(unpaid.status).toBe(402);
    const offered = decodePaymentRequired(unpaid.headers.get('PAYMENT-REQUIRED')!).accepts;
    expect(offered.map((offer) => offer.scheme)).toEqual(['exact', 'tally']);

    const tally = tallyScheme();
    const signer = toPaymentSigner(generatePrivateKey());
    const pipeline = new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tally], signer, budget: 10_000n });
    const before = { runs, calls: facilitator.tally.calls.length };

    const first = await pipeline.call(listing('echo'), { n: 1 });
    const second = await pipeline.call(listing('echo'), { n: 2 });

    expect(first.result).toEqual({ echo: { n: 1 } });
    expect(second.result).toEqual({ echo: { n: 2 } });
    expect(first.receipt).toMatchObject({ scheme: 'tally', transaction: null, amount: '1000', payTo, payer: signer.address });
    expect(runs - before.runs).toBe(2);
    expect(facilitator.tally.calls.slice(before.calls)).toEqual([
      { verb: 'verify', total: '1000', answer: 'ok' },
      { verb: 'settle', total: '1000', answer: 'ok' },
      { verb: 'verify', total: '2000', answer: 'ok' },
      { verb: 'settle', total: '2000', answer: 'ok' },
    ]);
    const key = tallyKey(signer.address, payTo, first.receipt!.asset);
    expect(facilitator.tally.totals.get(key)).toBe(2n * PRICE);
    expect(seller.totals.get(key)).toBe(2n * PRICE);
    expect(seller.reported).toMatchObject([
      { skill: 'echo', scheme: 'tally', amountAtomic: '1000', payer: signer.address, transaction: '' },
      { skill: 'echo', scheme: 'tally', amountAtomic: '1000', payer: signer.address, transaction: '' },
    ]);
    expect(tally.finished).toEqual([
      { total: '1000', charged: 'yes' },
      { total: '2000', charged: 'yes' },
    ]);
    expect(pipeline.spending).toEqual({ spent: 2n * PRICE, reserved: 0n, budget: 10_000n, remaining: 8_000n });
  });
});

describe('plugging a scheme in', () => {
  it('refuses a scheme whose id one of the server’s own schemes has', () => {
    const { scheme } = tallySeller();
    const build = () =>
      createSkillHandler(skills, {
        payTo: '0x0000000000000000000000000000000000000001',
        network: TALLY_NETWORK,
        channels: false,
        extraSchemes: [(context) => ({ ...scheme(context), id: 'exact' })],
      });
    expect(build).toThrow(ServeConfigError);
    expect(build).toThrow('two schemes have the id "exact"');
  });
});

describe('calls that end without a charge', () => {
  it('a handler error: the skill’s message, nothing settled, charged no, the budget released, the same total pays the next call', async () => {
    const { seller, listing } = await start();
    const tally = tallyScheme();
    const pipeline = new PaymentPipeline({
      network: TALLY_NETWORK,
      schemes: [tally],
      signer: toPaymentSigner(generatePrivateKey()),
      budget: 10_000n,
    });
    const settled = settles().length;

    const error = await pipeline.call(listing('fails'), {}).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SkillCallError);
    expect(error).toMatchObject({ status: 500, charged: 'no' });
    expect((error as Error).message).toContain('the well is dry');
    expect(settles().length).toBe(settled);
    expect(seller.reported).toEqual([]);
    expect(tally.finished).toEqual([{ total: '1000', charged: 'no' }]);
    expect(pipeline.spending).toMatchObject({ spent: 0n, reserved: 0n, remaining: 10_000n });
    expect((await pipeline.call(listing('echo'), { after: 'failure' })).result).toEqual({ echo: { after: 'failure' } });
    expect(tally.finished.at(-1)).toEqual({ total: '1000', charged: 'yes' });
  });

  it('input the skill refuses: 400 before the payment is taken or verified, charged no, the budget released', async () => {
    const { listing } = await start();
    const tally = tallyScheme();
    const { fetch, exchanges } = recordingPipelineFetch();
    const pipeline = new PaymentPipeline({
      network: TALLY_NETWORK,
      schemes: [tally],
      signer: toPaymentSigner(generatePrivateKey()),
      budget: 10_000n,
      fetch,
    });
    const calls = facilitator.tally.calls.length;
    const before = runs;

    const error = await pipeline.call(listing('strict'), { n: 'one' }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(MarketError);
    expect(error).toMatchObject({ status: 400, charged: 'no' });
    expect(exchanges.map((e) => e.status)).toEqual([402, 400]);
    expect(exchanges[1]!.proof).not.toBeNull();
    expect(facilitator.tally.calls.length).toBe(calls);
    expect(runs).toBe(before);
    expect(pipeline.spending).toMatchObject({ spent: 0n, reserved: 0n });
    expect((await pipeline.call(listing('strict'), { n: 1 })).result).toEqual({ n: 1 });
    expect(tally.finished.map((f) => f.total)).toEqual(['1000', '1000']);
  });
});
