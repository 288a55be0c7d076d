/**
 * One proof, one run: concurrent copies of a proof, retries after a lost response, reuse for
 * another input or skill, proofs whose payment never went through (facilitator down), and
 * payments whose outcome only the chain knows (a facilitator that cannot tell, like the
 * reference one: no `GET /settlements`) for a skill server given an RPC URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { serve, skill, type ServeOptions, type SkillServer } from 'skill-market/creator';
import { decodeSettleResponse } from 'skill-market/x402';
import {
  type PaymentStack,
  balances,
  loopbackServeOptions,
  postJson,
  proofFor,
  recordingLogger,
  startPaymentStack,
} from '../support/skill-server';
import { eventually, lastReading } from '../support/eventually';

const PRICE = 10_000n;
let stack: PaymentStack;
let server: SkillServer;
let payee: Address;
const runs: Record<string, number> = {};
const count = (name: string) => {
  runs[name] = (runs[name] ?? 0) + 1;
};

const skills = {
  work: skill({ price: '$0.01' }, async (input: { n?: number }) => {
    count('work');
    await Bun.sleep(100); // long enough for every concurrent copy to arrive while it runs
    return { doubled: (input.n ?? 0) * 2, nonce: crypto.randomUUID() };
  }),
  other: skill({ price: '$0.01' }, () => {
    count('other');
    return { other: true };
  }),
  triple: skill({ price: '$0.01' }, (input: { n: number }) => {
    count('triple');
    return { tripled: input.n * 3 };
  }),
  fail: skill({ price: '$0.01' }, () => {
    count('fail');
    throw new Error('flaky');
  }),
};

function options(extra: Partial<ServeOptions> = {}): ServeOptions {
  return loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, extra);
}

beforeAll(async () => {
  stack = await startPaymentStack();
  payee = (await stack.chain.createAccount()).address;
  server = await serve(skills, options());
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await stack?.close();
});

const at = (name: string, s: SkillServer = server) => `${s.url}/${name}`;
const newPayer = () => stack.chain.createAccount({ usdc: 1_000_000n });

describe('one proof, one run', () => {
  it('runs the handler once and transfers once when one proof arrives 20 times at once; the copies wait for its answer', async () => {
    const payer = await newPayer();
    const proof = await proofFor(at('work'), { n: 2 }, payer);
    const [payerBefore, payeeBefore] = await balances(stack.chain, payer.address, payee);
    const before = runs.work ?? 0;
    const responses = await Promise.all(Array.from({ length: 20 }, () => postJson(at('work'), { n: 2 }, { 'X-Payment': proof })));
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 200));
    expect(responses.filter((r) => r.headers.get('X-Payment-Replayed') === 'true')).toHaveLength(19);
    expect(new Set(await Promise.all(responses.map((r) => r.text()))).size).toBe(1);
    expect((runs.work ?? 0) - before).toBe(1);
    expect(await balances(stack.chain, payer.address, payee)).toEqual([payerBefore - PRICE, payeeBefore + PRICE]);
  });

  it('refuses the copies 409 payment_pending with Retry-After when they cannot wait (holdMs 0)', async () => {
    const s = await serve({ work: skills.work }, options({ holdMs: 0 }));
    try {
      const payer = await newPayer();
      const proof = await proofFor(at('work', s), { n: 3 }, payer);
      const before = runs.work ?? 0;
      const responses = await Promise.all(Array.from({ length: 20 }, () => postJson(at('work', s), { n: 3 }, { 'X-Payment': proof })));
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      expect(statuses.filter((status) => status === 409)).toHaveLength(19);
      const refused = responses.find((r) => r.status === 409)!;
      expect(refused.headers.get('retry-after')).toBe('2');
      expect(await refused.json()).toMatchObject({
        success: false,
        code: 'payment_pending',
        error: expect.stringContaining('already being processed'),
      });
      expect((runs.work ?? 0) - before).toBe(1);
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
    } finally {
      await s.stop();
    }
  });

  it('answers a retry with the same proof with the stored response of the first run, not a second charge', async () => {
    const payer = await newPayer();
    const proof = await proofFor(at('work'), { n: 21 }, payer);
    const first = await postJson(at('work'), { n: 21 }, { 'X-Payment': proof });
    const firstBody = await first.text();
    expect(first.status).toBe(200);
    const before = runs.work!;
    const [payerAfterFirst] = await balances(stack.chain, payer.address);

    const retry = await postJson(at('work'), { n: 21 }, { 'X-Payment': proof });
    expect(retry.status).toBe(200);
    expect(await retry.text()).toBe(firstBody); // same result, same timestamp
    expect(retry.headers.get('PAYMENT-RESPONSE')).toBe(first.headers.get('PAYMENT-RESPONSE'));
    expect(retry.headers.get('X-Payment-Replayed')).toBe('true');
    expect(runs.work).toBe(before);
    expect(await stack.chain.balanceOf(payer.address)).toBe(payerAfterFirst!);
    expect(payerAfterFirst).toBe(1_000_000n - PRICE);
  });

  it('refuses a used proof for another input or another skill as already used', async () => {
    const payer = await newPayer();
    const proof = await proofFor(at('work'), { n: 1 }, payer);
    expect((await postJson(at('work'), { n: 1 }, { 'X-Payment': proof })).status).toBe(200);
    const before = { work: runs.work, other: runs.other ?? 0 };
    for (const [name, input] of [
      ['work', { n: 99 }],
      ['other', {}],
    ] as const) {
      const res = await postJson(at(name), input, { 'X-Payment': proof });
      expect(res.status).toBe(402);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_exact_evm_nonce_already_used');
    }
    expect({ work: runs.work, other: runs.other ?? 0 }).toEqual(before);
    expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
  });

  it('answers a retry after a handler failure with the same 500, without running the handler again', async () => {
    const payer = await newPayer();
    const proof = await proofFor(at('fail'), {}, payer);
    const first = await postJson(at('fail'), {}, { 'X-Payment': proof });
    expect(first.status).toBe(500);
    const body = await first.text();
    const retry = await postJson(at('fail'), {}, { 'X-Payment': proof });
    expect(retry.status).toBe(500);
    expect(await retry.text()).toBe(body);
    expect(runs.fail).toBe(1);
    expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n);
  });
});

/** A fetch to the facilitator whose `/settle` fails (connection reset) while `down`; counts the settles sent. */
function settleOutage() {
  const outage = {
    down: true,
    attempts: 0,
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      if (String(input).endsWith('/settle')) {
        outage.attempts++;
        if (outage.down) throw new TypeError('fetch failed: connection reset');
      }
      return fetch(input, init);
    }) as typeof fetch,
  };
  return outage;
}

describe('when the facilitator cannot be reached', () => {
  it('answers 503 without running the handler when /verify is unreachable, and the same proof works once it is back', async () => {
    let down = true;
    const flaky = (async (input: string | URL | Request, init?: RequestInit) => {
      if (down && String(input).endsWith('/verify')) throw new TypeError('fetch failed: connection refused');
      return fetch(input, init);
    }) as typeof fetch;
    const s = await serve({ other: skills.other }, options({ fetch: flaky }));
    try {
      const payer = await newPayer();
      const proof = await proofFor(at('other', s), {}, payer);
      const before = runs.other ?? 0;
      const refused = await postJson(at('other', s), {}, { 'X-Payment': proof });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('2');
      expect(await refused.json()).toMatchObject({ success: false, error: 'Payment facilitator unavailable; nothing was charged' });
      expect(runs.other ?? 0).toBe(before);
      down = false;
      expect((await postJson(at('other', s), {}, { 'X-Payment': proof })).status).toBe(200);
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
    } finally {
      await s.stop();
    }
  });

  it('holds the request when /settle is unreachable after the handler ran, and answers it the result once a settle goes through', async () => {
    const flaky = settleOutage();
    const logger = recordingLogger();
    const s = await serve({ other: skills.other }, options({ fetch: flaky.fetch, logger }));
    try {
      const payer = await newPayer();
      const proof = await proofFor(at('other', s), {}, payer);
      const before = runs.other ?? 0;
      const answer = postJson(at('other', s), {}, { 'X-Payment': proof });
      await logger.logged('warn', 'settlement outcome unknown (facilitator unavailable); result held');
      // While the facilitator cannot take the settle (the watcher sends it again), nothing moves.
      await eventually(
        () => flaky.attempts,
        (attempts) => attempts >= 2,
        'the watcher sends the settle again',
      );
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n);

      flaky.down = false;
      const res = await answer;
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ success: true, result: { other: true } });
      expect(decodeSettleResponse(res.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({ success: true, payer: payer.address });
      expect(res.headers.get('X-Payment-Replayed')).toBeNull();
      expect(runs.other).toBe(before + 1);
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
    } finally {
      await s.stop();
    }
  });

  it('past holdMs answers 409 "pending" with Retry-After; a retry of the proof then gets the result once the settle goes through', async () => {
    const flaky = settleOutage();
    const logger = recordingLogger();
    const s = await serve({ other: skills.other }, options({ fetch: flaky.fetch, logger, holdMs: 200 }));
    try {
      const payer = await newPayer();
      const proof = await proofFor(at('other', s), {}, payer);
      const before = runs.other ?? 0;
      const first = await postJson(at('other', s), {}, { 'X-Payment': proof });
      expect(first.status).toBe(409);
      expect(first.headers.get('retry-after')).toBe('2');
      expect(await first.json()).toMatchObject({ success: false, code: 'payment_pending', retryAfter: 2 });
      expect(logger.has('warn', 'settlement outcome unknown (facilitator unavailable); result held')).toBe(true);
      // While the facilitator cannot take the settle (the watcher asks it again), the result stays held and nothing moves.
      await eventually(
        () => flaky.attempts,
        (attempts) => attempts >= 2,
        'the watcher sends the settle again',
      );
      const meanwhile = await postJson(at('other', s), {}, { 'X-Payment': proof });
      expect(meanwhile.status).toBe(409);
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n);

      flaky.down = false;
      const retry = await retryWhilePending(at('other', s), {}, proof);
      expect(retry.status).toBe(200);
      expect(await retry.json()).toMatchObject({ success: true, result: { other: true } });
      expect(retry.headers.get('PAYMENT-RESPONSE')).toBeTruthy();
      expect(runs.other).toBe(before + 1);
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
      expect(logger.has('info', 'payment confirmed; held result released')).toBe(true);
    } finally {
      await s.stop();
    }
  });
});

/**
 * A fetch between the skill server and the facilitator: `/settlements` (POST and GET) is unknown there, and the
 * answer of `/settle` is lost — after it reached the facilitator (`settleReaches`), or before.
 */
function lossy(settleReaches: boolean): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    if (url.includes('/settlements')) return new Response('Not Found', { status: 404 });
    if (url.endsWith('/settle')) {
      if (settleReaches) await (await fetch(input, init)).text();
      throw new TypeError('fetch failed: connection reset');
    }
    return fetch(input, init);
  }) as typeof fetch;
}

async function startLossy(
  settleReaches: boolean,
  extra: Partial<ServeOptions> = {},
): Promise<{ s: SkillServer; logger: ReturnType<typeof recordingLogger> }> {
  const logger = recordingLogger();
  return {
    s: await serve({ triple: skills.triple }, options({ rpcUrl: stack.chain.rpcUrl, fetch: lossy(settleReaches), logger, ...extra })),
    logger,
  };
}

/** Re-sends `proof` while the answer is 409 payment_pending (bounded); the last answer. */
async function retryWhilePending(url: string, input: unknown, proof: string): Promise<Response> {
  return lastReading(
    () => postJson(url, input, { 'X-Payment': proof }),
    (res) => res.status !== 409,
    20_000,
  );
}

describe('a payment outcome only the chain knows', () => {
  it('answers the held request the result once the chain shows the authorization used', async () => {
    const { s, logger } = await startLossy(true);
    try {
      const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
      const url = at('triple', s);
      const proof = await proofFor(url, { n: 7 }, payer);
      const retry = await postJson(url, { n: 7 }, { 'X-Payment': proof });
      expect(logger.has('warn', 'settlement outcome unknown (facilitator unavailable); result held')).toBe(true);
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE); // it did settle; the answer was lost
      expect(retry.status).toBe(200);
      expect(await retry.json()).toMatchObject({ success: true, result: { tripled: 21 } });
      expect(decodeSettleResponse(retry.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
        success: true,
        payer: payer.address,
        network: stack.chain.network,
      });
      expect(logger.has('info', 'payment confirmed; held result released')).toBe(true);
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
    } finally {
      await s.stop();
    }
  });

  // Last: it moves the chain's clock an hour ahead.
  it('holds the request past holdMs until its authorization expired unused, then answers 402 with the reason: result withheld, nothing moved', async () => {
    const holdMs = 200;
    const { s } = await startLossy(false, { holdMs });
    try {
      const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
      const url = at('triple', s);
      const proof = await proofFor(url, { n: 1 }, payer);
      const before = runs.triple ?? 0;
      // Never settled (the settle is lost and the chain has no block past validBefore yet): with
      // the chain to read, the request waits for the final outcome, well past holdMs.
      const held = postJson(url, { n: 1 }, { 'X-Payment': proof });
      const open = await Promise.race([held, Bun.sleep(holdMs * 5).then(() => 'held' as const)]);
      expect(open).toBe('held');
      expect(runs.triple).toBe(before + 1);

      await stack.chain.testClient.increaseTime({ seconds: 3600 });
      await stack.chain.testClient.mine({ blocks: 1 });
      const dead = await held;
      expect(dead.status).toBe(402);
      const body = (await dead.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ error: 'invalid_exact_evm_payload_authorization_valid_before' });
      expect(JSON.stringify(body)).not.toContain('tripled');
      expect((await postJson(url, { n: 1 }, { 'X-Payment': proof })).status).toBe(402);
      expect(runs.triple).toBe(before + 1);
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n);
    } finally {
      await s.stop();
    }
  });
});
