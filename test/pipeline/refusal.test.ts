/**
 * Refusals, in the made-up scheme `tally` (test/support/schemes/) between our client, a real serve()
 * skill server and our facilitator, in memory: a payment the facilitator refuses is answered 402
 * with its reason before the handler runs; a settle refused after the handler ran withholds the
 * result; a corrective 402 (the server holds another total) is followed by one retry, signed anew;
 * a payment in a scheme the skill does not sell is answered the 402 naming it. Whenever nothing was
 * charged the client says so and releases the budget.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test';
import { generatePrivateKey } from 'viem/accounts';
import { skill } from 'skill-market/creator';
import { MarketError, PaymentPipeline, toPaymentSigner } from 'skill-market/client';
import { decodePaymentRequired, encodeBase64Json } from 'skill-market/x402';
import { TALLY_NETWORK, TALLY_REASONS } from '../support/schemes/tally';
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
/** Run by the `spends` skill: what the payer does meanwhile (e.g. spends their credit elsewhere). */
let meanwhile = () => {};
const skills = {
  echo: skill({ price: '$0.001' }, (input) => {
    runs++;
    return { echo: input };
  }),
  spends: skill({ price: '$0.001' }, (input) => {
    runs++;
    meanwhile();
    return { echo: input };
  }),
};
const servers: TallySkillServer[] = [];

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

const callsSince = (from: number) => facilitator.tally.calls.slice(from);

describe('a refused payment', () => {
  it('the facilitator refuses it: 402 with its reason before the handler runs, nothing settled, charged no, the budget released', async () => {
    const { listing, seller } = await start();
    const signer = countingSigner();
    facilitator.tally.credit.set(signer.address.toLowerCase(), PRICE - 1n);
    const tally = tallyScheme();
    const pipeline = new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tally], signer, budget: 10_000n });
    const from = facilitator.tally.calls.length;
    const before = runs;

    const error = await pipeline.call(listing('echo'), {}).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(MarketError);
    expect(error).toMatchObject({ code: 'payment_rejected', status: 402, charged: 'no' });
    expect((error as Error).message).toContain(TALLY_REASONS.insufficientFunds);
    expect(callsSince(from)).toEqual([{ verb: 'verify', total: '1000', answer: TALLY_REASONS.insufficientFunds }]);
    expect(runs).toBe(before);
    expect(seller.reported).toEqual([]);
    expect(tally.finished).toEqual([{ total: '1000', charged: 'no' }]);
    expect(pipeline.spending).toEqual({ spent: 0n, reserved: 0n, budget: 10_000n, remaining: 10_000n });
  });

  it('the settle is refused after the handler ran: the result is withheld, 402 with the reason, charged no, the budget released', async () => {
    const { listing, seller } = await start();
    const signer = countingSigner();
    meanwhile = () => facilitator.tally.credit.set(signer.address.toLowerCase(), 0n);
    const tally = tallyScheme();
    const pipeline = new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tally], signer, budget: 10_000n });
    const from = facilitator.tally.calls.length;
    const before = runs;

    const error = await pipeline.call(listing('spends'), { secret: 'result' }).catch((e: unknown) => e);
    meanwhile = () => {};

    expect(error).toMatchObject({ code: 'payment_rejected', status: 402, charged: 'no' });
    expect((error as MarketError).body).not.toContain('secret');
    expect(runs - before).toBe(1);
    expect(callsSince(from)).toEqual([
      { verb: 'verify', total: '1000', answer: 'ok' },
      { verb: 'settle', total: '1000', answer: TALLY_REASONS.insufficientFunds },
    ]);
    expect(seller.reported).toEqual([]);
    expect(tally.finished).toEqual([{ total: '1000', charged: 'no' }]);
    expect(pipeline.spending).toMatchObject({ spent: 0n, reserved: 0n, remaining: 10_000n });
  });

  it('a corrective 402: a client that lost its tally adopts the total it signed and is paid on its one retry, charged once', async () => {
    const { listing } = await start();
    const key = generatePrivateKey();
    await new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tallyScheme()], signer: toPaymentSigner(key) }).call(listing('echo'), {});

    // The same payer in another process, without the first one's tally.
    const restarted = tallyScheme();
    const { fetch, exchanges } = recordingPipelineFetch();
    const pipeline = new PaymentPipeline({
      network: TALLY_NETWORK,
      schemes: [restarted],
      signer: toPaymentSigner(key),
      budget: 10_000n,
      fetch,
    });
    const from = facilitator.tally.calls.length;

    const { result, receipt } = await pipeline.call(listing('echo'), { again: true });

    expect(result).toEqual({ echo: { again: true } });
    expect(receipt).toMatchObject({ scheme: 'tally', amount: '1000' });
    expect(exchanges.map((e) => e.status)).toEqual([402, 402, 200]);
    const corrective = decodePaymentRequired(exchanges[1]!.headers!.get('PAYMENT-REQUIRED')!);
    expect(corrective.error).toBe(TALLY_REASONS.mismatch);
    // The total held, under the signature the payer gave it: the client adopts it and signs the next.
    expect(corrective.accepts.find((offer) => offer.scheme === 'tally')?.extra).toMatchObject({
      total: '1000',
      signature: expect.any(String),
    });
    expect(callsSince(from).map((c) => `${c.verb} ${c.total} ${c.answer}`)).toEqual(['verify 2000 ok', 'settle 2000 ok']);
    expect(restarted.finished).toEqual([{ total: '2000', charged: 'yes' }]);
    expect(pipeline.spending).toMatchObject({ spent: PRICE, reserved: 0n });
  });

  it('a payment in a scheme the skill does not sell is answered the 402 naming it: nothing verified, nothing run', async () => {
    const { server } = await start();
    const from = facilitator.tally.calls.length;
    const before = runs;
    const payment = { x402Version: 2, accepted: { scheme: 'cash', network: TALLY_NETWORK }, payload: {} };

    const answer = await fetch(`${server.url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'PAYMENT-SIGNATURE': encodeBase64Json(payment) },
      body: '{}',
    });

    expect(answer.status).toBe(402);
    expect(decodePaymentRequired(answer.headers.get('PAYMENT-REQUIRED')!).error).toBe('Unsupported scheme "cash"');
    expect(callsSince(from)).toEqual([]);
    expect(runs).toBe(before);
  });
});
