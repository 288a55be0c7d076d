/**
 * A skill server given an RPC URL, whose facilitator cannot say what became of a settlement
 * (like the reference facilitator: no `GET /settlements`): the chain decides. A transfer that
 * happened releases the held result to the retried proof; an authorization that expired unused
 * leaves the proof dead (402), the result withheld, and nothing moved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { serve, skill, type SkillServer } from '../../sdk/creator/index';
import { decodeSettleResponse } from '../../sdk/x402/index';
import { postJson, proofFor, recordingLogger, startPaymentStack, type PaymentStack } from '../support/skill-server';

const PRICE = 10_000n;
let stack: PaymentStack;
let payee: Address;
let runs = 0;
const skills = { work: skill({ price: '$0.01' }, (input: { n: number }) => (runs++, { tripled: input.n * 3 })) };

beforeAll(async () => {
  stack = await startPaymentStack();
  payee = (await stack.chain.createAccount()).address;
}, 30_000);
afterAll(() => stack?.close());

/**
 * A fetch between the skill server and the facilitator: `/settlements` is unknown there, and the
 * answer of `/settle` is lost — after it reached the facilitator (`settleReaches`), or before.
 */
function lossy(settleReaches: boolean): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    if (url.includes('/settlements/')) return new Response('Not Found', { status: 404 });
    if (url.endsWith('/settle')) {
      if (settleReaches) await (await fetch(input, init)).text();
      throw new TypeError('fetch failed: connection reset');
    }
    return fetch(input, init);
  }) as typeof fetch;
}

async function start(settleReaches: boolean): Promise<{ server: SkillServer; logger: ReturnType<typeof recordingLogger> }> {
  const logger = recordingLogger();
  const server = await serve(skills, {
    port: 0,
    hostname: '127.0.0.1',
    wallet: payee,
    facilitatorUrl: stack.facilitatorUrl,
    network: stack.chain.network,
    asset: stack.asset,
    rpcUrl: stack.chain.rpcUrl,
    fetch: lossy(settleReaches),
    trackCalls: false,
    logger,
    env: {},
  });
  return { server, logger };
}

/** Re-sends `proof` while the answer is 409 payment_pending (bounded); the last answer. */
async function retryWhilePending(url: string, input: unknown, proof: string): Promise<Response> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await postJson(url, input, { 'X-Payment': proof });
    if (res.status !== 409 || Date.now() > deadline) return res;
    await Bun.sleep(100);
  }
}

describe('a payment outcome only the chain knows', () => {
  it('releases the held result to the retried proof once the chain shows the authorization used', async () => {
    const { server, logger } = await start(true);
    try {
      const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
      const url = `${server.url}/work`;
      const proof = await proofFor(url, { n: 7 }, payer);
      const first = await postJson(url, { n: 7 }, { 'X-Payment': proof });
      expect(first.status).toBe(409);
      expect(await first.json()).toMatchObject({ code: 'payment_pending' });
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE); // it did settle; the answer was lost

      const retry = await retryWhilePending(url, { n: 7 }, proof);
      expect(retry.status).toBe(200);
      expect(await retry.json()).toMatchObject({ success: true, result: { tripled: 21 } });
      expect(decodeSettleResponse(retry.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({ success: true, payer: payer.address, network: stack.chain.network });
      expect(logger.has('info', 'payment confirmed; result released to the retry')).toBe(true);
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
    } finally {
      await server.stop();
    }
  });

  // Last: it moves the chain's clock an hour ahead.
  it('declares the proof dead once its authorization expired unused: 402 with the reason, result withheld, nothing moved', async () => {
    const { server } = await start(false);
    try {
      const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
      const url = `${server.url}/work`;
      const proof = await proofFor(url, { n: 1 }, payer);
      const before = runs;
      expect((await postJson(url, { n: 1 }, { 'X-Payment': proof })).status).toBe(409);
      expect(runs).toBe(before + 1);
      expect((await postJson(url, { n: 1 }, { 'X-Payment': proof })).status).toBe(409); // unused, still usable: pending

      await stack.chain.testClient.increaseTime({ seconds: 3600 });
      await stack.chain.testClient.mine({ blocks: 1 });
      const dead = await retryWhilePending(url, { n: 1 }, proof);
      expect(dead.status).toBe(402);
      const body = (await dead.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ error: 'invalid_exact_evm_payload_authorization_valid_before' });
      expect(JSON.stringify(body)).not.toContain('tripled');
      expect((await postJson(url, { n: 1 }, { 'X-Payment': proof })).status).toBe(402);
      expect(runs).toBe(before + 1);
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n);
    } finally {
      await server.stop();
    }
  });
});
