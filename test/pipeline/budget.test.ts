/**
 * Spending caps, in the made-up scheme `tally` (test/support/schemes/) between our client, a real
 * serve() skill server and our facilitator, in memory: the budget and maxPrice refuse a call
 * before anything is signed (maxPrice before any request at all), and parallel calls hold the
 * budget as they go, so exactly as many go through as it covers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { skill } from 'skill-market/creator';
import { PaymentPipeline, SpendingLimitError, type PaymentPipelineOptions } from 'skill-market/client';
import { TALLY_ASSET, TALLY_NETWORK, tallyKey } from '../support/schemes/tally';
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
let served: TallySkillServer;
const skills = { echo: skill({ price: '$0.001' }, (input) => ({ echo: input })) };

beforeAll(async () => {
  facilitator = await startTallyFacilitator();
  served = await serveTally(skills, facilitator.url);
}, 60_000);
afterAll(async () => {
  await served?.server.stop();
  await facilitator?.close();
});

/** A pipeline paying in tally from a new counted key, its requests recorded. */
function client(options: Partial<PaymentPipelineOptions> = {}) {
  const signer = countingSigner();
  const tally = tallyScheme();
  const { fetch, exchanges } = recordingPipelineFetch();
  const pipeline = new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tally], signer, fetch, ...options });
  return { pipeline, signer, tally, exchanges };
}

describe('spending caps', () => {
  it('refuses a call the budget cannot cover before signing: no proof is sent, nothing is held', async () => {
    const { pipeline, signer, exchanges } = client({ budget: PRICE + PRICE / 2n });
    await pipeline.call(served.listing('echo'), { n: 1 });
    const sent = exchanges.length;

    const error = await pipeline.call(served.listing('echo'), { n: 2 }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SpendingLimitError);
    expect(error).toMatchObject({ code: 'budget_exceeded', limit: 'budget', price: PRICE, allowed: PRICE / 2n });
    expect(signer.signatures).toBe(1);
    expect(exchanges.slice(sent)).toEqual([]);
    expect(pipeline.spending).toEqual({ spent: PRICE, reserved: 0n, budget: PRICE + PRICE / 2n, remaining: PRICE / 2n });
  });

  it('refuses a price above maxPrice before any request to the skill', async () => {
    const { pipeline, signer, exchanges } = client({ maxPrice: PRICE - 1n, budget: 10_000n });

    const error = await pipeline.call(served.listing('echo'), {}).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SpendingLimitError);
    expect(error).toMatchObject({ code: 'max_price_exceeded', limit: 'maxPrice' });
    expect(exchanges).toEqual([]);
    expect(signer.signatures).toBe(0);
    expect(pipeline.spending).toMatchObject({ spent: 0n, reserved: 0n, remaining: 10_000n });
  });

  it('lets exactly as many parallel calls through as the budget covers; the rest are refused before signing', async () => {
    const { pipeline, signer, tally } = client({ budget: 3n * PRICE });

    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => pipeline.call(served.listing('echo'), { i })));

    const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
    expect(refused.map((e) => (e as SpendingLimitError).code)).toEqual(['budget_exceeded', 'budget_exceeded']);
    expect(signer.signatures).toBe(3);
    expect(tally.finished.map((f) => f.charged)).toEqual(['yes', 'yes', 'yes']);
    expect(facilitator.tally.totals.get(tallyKey(signer.address, served.payTo, TALLY_ASSET))).toBe(3n * PRICE);
    expect(pipeline.spending).toEqual({ spent: 3n * PRICE, reserved: 0n, budget: 3n * PRICE, remaining: 0n });
  });
});
