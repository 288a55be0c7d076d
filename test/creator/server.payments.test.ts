/**
 * The paid skill server on a local chain with our facilitator over HTTP: the 402 terms, input
 * validation before payment, a paid call and its receipt, and every way a call can end without a
 * charge (handler error, production error text, timeout, bad output, failed settlement).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { SkillTimeoutError, serve, skill, type SkillServer } from 'skill-market/creator';
import {
  decodePaymentRequired,
  decodeSettleResponse,
  encodePaymentPayload,
  parsePaymentRequirements,
  signAuthorization,
} from 'skill-market/x402';
import { type TestAccount, usdCoinAbi } from '../support/chain';
import { eventually } from '../support/eventually';
import {
  type PaymentStack,
  balances,
  loopbackServeOptions,
  paidPost,
  postJson,
  proofFor,
  recordingLogger,
  startPaymentStack,
} from '../support/skill-server';

const PRICE = 10_000n; // $0.01
let stack: PaymentStack;
let server: SkillServer;
let payee: Address;
const logger = recordingLogger();
const calls: [string, unknown][] = [];
const errors: [string, unknown][] = [];
const runs: Record<string, number> = {};
let slowSignal: AbortSignal | undefined;
/** Lets the slow handler end; whether it did. */
let endSlow: (() => void) | undefined;
let slowEnded = false;
const drainers = new Map<string, TestAccount>();

const counted = <T>(name: string, fn: () => T) => {
  runs[name] = (runs[name] ?? 0) + 1;
  return fn();
};

const skills = {
  echo: skill(
    {
      price: '$0.01',
      description: 'Echoes text',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
    ({ text }: { text: string }) => counted('echo', () => ({ echo: text })),
  ),
  boom: skill({ price: '$0.01' }, () =>
    counted('boom', () => {
      throw new Error('kaboom: database password is hunter2');
    }),
  ),
  slow: skill({ price: '$0.01', timeout: 300 }, async (_input, { signal }) => {
    counted('slow', () => (slowSignal = signal));
    // Runs past its 300 ms timeout, until the test lets it end: the subject of its test.
    await new Promise<void>((resolve) => {
      endSlow = resolve;
    });
    slowEnded = true;
    return { late: true };
  }),
  liar: skill({ price: '$0.01', outputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } }, () =>
    counted('liar', () => ({ n: 'three' })),
  ),
  drain: skill({ price: '$0.01' }, async (_input, { payer }) => {
    counted('drain', () => undefined);
    // The payer spends its funds while the handler runs: settlement must fail.
    const account = drainers.get(payer.toLowerCase())!;
    const hash = await stack.chain.walletClient(account).writeContract({
      address: stack.chain.token.address,
      abi: usdCoinAbi,
      functionName: 'transfer',
      args: [stack.chain.accounts.payees[1]!.address, PRICE],
    });
    await stack.chain.publicClient.waitForTransactionReceipt({ hash });
    return { secret: 'result that must not leave unpaid' };
  }),
};

beforeAll(async () => {
  stack = await startPaymentStack();
  payee = (await stack.chain.createAccount()).address;
  server = await serve(
    skills,
    loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
      logger,
      onCall: (name, input) => void calls.push([name, input]),
      onError: (name, error) => void errors.push([name, error]),
    }),
  );
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await stack?.close();
});

const at = (name: string) => `${server.url}/${name}`;
const newPayer = (usdc = 1_000_000n) => stack.chain.createAccount({ usdc });

describe('skill server endpoints', () => {
  it('answers GET /health openly with the status and skill names, uncached and CORS-readable', async () => {
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', skills: ['echo', 'boom', 'slow', 'liar', 'drain'] });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers a call without payment 402 with the documented body and the PAYMENT-REQUIRED header', async () => {
    const res = await postJson(at('echo'), { text: 'hi' });
    expect(res.status).toBe(402);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('access-control-expose-headers')).toContain('PAYMENT-REQUIRED');
    expect(res.headers.get('access-control-expose-headers')).toContain('PAYMENT-RESPONSE');
    const body = (await res.json()) as Record<string, any>;
    expect(body).toMatchObject({
      accepts: { scheme: 'exact', price: '0.01', network: stack.chain.network, payTo: payee, maxTimeoutSeconds: 60 },
      description: 'Echoes text',
    });
    const required = decodePaymentRequired(res.headers.get('PAYMENT-REQUIRED')!);
    expect(required.x402Version).toBe(2);
    expect(required.resource).toMatchObject({ url: `${server.url}/echo`, description: 'Echoes text' });
    expect(required.accepts[0]).toEqual({
      scheme: 'exact',
      network: stack.chain.network,
      amount: PRICE.toString(),
      asset: stack.chain.token.address,
      payTo: payee,
      maxTimeoutSeconds: 60,
      extra: { name: 'USD Coin', version: '2' },
    });
  });

  it('answers 404 for an unknown skill, 405 for PUT on a skill, 204 to a preflight, 413 to a huge body', async () => {
    expect((await postJson(at('nope'), {})).status).toBe(404);
    const put = await fetch(at('echo'), { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toContain('POST');
    const preflight = await fetch(at('echo'), { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('X-Payment');
    expect((await postJson(at('echo'), { text: 'x'.repeat(1_100_000) }, { 'X-Payment': 'e30=' })).status).toBe(413);
  });
});

describe('GET on a skill', () => {
  it('answers 402 with the same terms as a POST, and 405 (Allow: POST) to an exact proof, which stays unspent', async () => {
    const get = await fetch(at('echo'));
    const post = await postJson(at('echo'), { text: 'hi' });
    expect(get.status).toBe(402);
    expect(get.headers.get('PAYMENT-REQUIRED')).toBe(post.headers.get('PAYMENT-REQUIRED'));

    const payer = await newPayer();
    const proof = await proofFor(at('echo'), { text: 'later' }, payer);
    const [before] = await balances(stack.chain, payer.address);
    const refused = await fetch(at('echo'), { headers: { 'X-Payment': proof } });
    expect(refused.status).toBe(405);
    expect(refused.headers.get('allow')).toBe('POST');
    expect(await stack.chain.balanceOf(payer.address)).toBe(before);
    // Nothing was verified or claimed: the same proof still pays its POST.
    const paid = await postJson(at('echo'), { text: 'later' }, { 'X-Payment': proof });
    expect(paid.status).toBe(200);
  });
});

describe('input before payment', () => {
  it('answers invalid JSON 400 (never treated as {}), even with a proof attached, and charges nothing', async () => {
    const payer = await newPayer();
    const proof = await proofFor(at('echo'), { text: 'a' }, payer);
    const res = await fetch(at('echo'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Payment': proof },
      body: '{"text": "a"',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ success: false, error: expect.stringContaining('Invalid JSON body') });
    expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n);
  });

  it('answers a POST without a payment 402 whatever its body (a crawler probes with none), before reading it', async () => {
    for (const body of ['', '{}', '{"txt":"a"}', '{oops']) {
      const unpaid = await fetch(at('echo'), { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(unpaid.status).toBe(402);
      expect(unpaid.headers.get('PAYMENT-REQUIRED')).not.toBeNull();
    }
  });

  it('answers paid input failing the inputSchema 400 with the errors before taking payment; the proof stays usable', async () => {
    const payer = await newPayer();
    const proof = await proofFor(at('echo'), { text: 'a' }, payer);
    const before = runs.echo ?? 0;
    const invalid = await postJson(at('echo'), { txt: 'a' }, { 'X-Payment': proof });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('PAYMENT-REQUIRED')).toBeNull();
    expect(await invalid.json()).toMatchObject({
      success: false,
      error: 'Invalid input',
      details: [{ path: '/', message: "must have required property 'text'" }],
    });
    expect((await postJson(at('echo'), { text: 5 }, { 'X-Payment': proof })).status).toBe(400);
    expect(runs.echo ?? 0).toBe(before);
    expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n);
    expect((await postJson(at('echo'), { text: 'a' }, { 'X-Payment': proof })).status).toBe(200);
  });
});

describe('a paid call', () => {
  it('runs the handler, answers 200 with the result, settles exactly the price and sends the receipt in both headers', async () => {
    const payer = await newPayer();
    const [payerBefore, payeeBefore] = await balances(stack.chain, payer.address, payee);
    const res = await paidPost(at('echo'), { text: 'bonjour' }, payer);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { success: boolean; result: unknown; timestamp: string };
    expect(body).toMatchObject({ success: true, result: { echo: 'bonjour' } });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
    const receipt = decodeSettleResponse(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, payer: payer.address, network: stack.chain.network });
    expect(res.headers.get('X-PAYMENT-RESPONSE')).toBe(res.headers.get('PAYMENT-RESPONSE'));
    expect(await balances(stack.chain, payer.address, payee)).toEqual([payerBefore - PRICE, payeeBefore + PRICE]);
    expect(calls).toContainEqual(['echo', { text: 'bonjour' }]);
  });

  it('accepts the proof in PAYMENT-SIGNATURE as well as X-Payment', async () => {
    const payer = await newPayer();
    const proof = await proofFor(at('echo'), { text: 'v2' }, payer);
    const res = await postJson(at('echo'), { text: 'v2' }, { 'PAYMENT-SIGNATURE': proof });
    expect(res.status).toBe(200);
  });

  it('accepts a legacy v1 payload in X-Payment (network name, no accepted terms)', async () => {
    const payer = await newPayer();
    const unpaid = await postJson(at('echo'), { text: 'v1' });
    const required = decodePaymentRequired(unpaid.headers.get('PAYMENT-REQUIRED')!);
    const { payload } = await signAuthorization(payer, parsePaymentRequirements(required.accepts[0]));
    const v1 = encodePaymentPayload({ x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload });
    const res = await postJson(at('echo'), { text: 'v1' }, { 'X-Payment': v1 });
    expect(res.status).toBe(200);
    expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n - PRICE);
  });

  it('answers 402 with the reason for a malformed, mismatched or unfunded proof, without running the handler', async () => {
    const before = runs.echo ?? 0;
    const malformed = await postJson(at('echo'), { text: 'a' }, { 'X-Payment': 'not-base64!' });
    expect(malformed.status).toBe(402);
    expect(((await malformed.json()) as { error: string }).error).toContain('Malformed payment header');

    const cheapServer = await serve(
      { echo: skill({ price: '$0.001' }, () => 'x') },
      loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
        logger,
      }),
    );
    const cheapProof = await proofFor(`${cheapServer.url}/echo`, { text: 'a' }, await newPayer());
    await cheapServer.stop();
    const mismatched = await postJson(at('echo'), { text: 'a' }, { 'X-Payment': cheapProof });
    expect(mismatched.status).toBe(402);
    expect(((await mismatched.json()) as { error: string }).error).toContain('does not match');

    const broke = await newPayer(1n);
    const unfunded = await postJson(at('echo'), { text: 'a' }, { 'X-Payment': await proofFor(at('echo'), { text: 'a' }, broke) });
    expect(unfunded.status).toBe(402);
    expect(((await unfunded.json()) as { error: string }).error).toBe('invalid_exact_evm_insufficient_balance');
    expect(decodePaymentRequired(unfunded.headers.get('PAYMENT-REQUIRED')!).error).toBe('invalid_exact_evm_insufficient_balance');
    expect(runs.echo ?? 0).toBe(before);
  });
});

describe('calls that end without a charge', () => {
  it('answers a throwing handler 500 with its message, calls onError, and moves no money', async () => {
    const payer = await newPayer();
    const res = await paidPost(at('boom'), {}, payer);
    expect(res.status).toBe(500);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ success: false, error: 'kaboom: database password is hunter2' });
    expect(typeof body.timestamp).toBe('string');
    expect(res.headers.get('PAYMENT-RESPONSE')).toBeNull();
    expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n);
    expect(errors.find(([name]) => name === 'boom')?.[1]).toBeInstanceOf(Error);
  });

  it('answers "Internal server error" in production, never the handler message', async () => {
    const production = await serve(
      { boom: skills.boom },
      {
        port: 0,
        hostname: '127.0.0.1',
        wallet: payee,
        facilitatorUrl: stack.facilitatorUrl,
        network: stack.chain.network,
        asset: stack.asset,
        trackCalls: false,
        logger,
        env: { NODE_ENV: 'production' },
      },
    );
    try {
      const payer = await newPayer();
      const res = await paidPost(`${production.url}/boom`, {}, payer);
      expect(res.status).toBe(500);
      expect(await res.json()).toMatchObject({ success: false, error: 'Internal server error' });
      expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n);
    } finally {
      await production.stop();
    }
  });

  it('answers a handler past its timeout 504, aborts its signal, reports it to onError and moves no money', async () => {
    const payer = await newPayer();
    const res = await paidPost(at('slow'), {}, payer);
    expect(res.status).toBe(504);
    expect(slowEnded).toBe(false); // answered at the timeout, not when the handler ended
    expect(await res.json()).toMatchObject({ success: false, error: 'Skill timed out after 300 ms' });
    expect(slowSignal?.aborted).toBe(true);
    expect(errors.find(([name]) => name === 'slow')?.[1]).toBeInstanceOf(SkillTimeoutError);
    endSlow?.(); // the abandoned handler finishes: still nothing is settled
    await eventually(async () => slowEnded, Boolean, 'the slow handler ended');
    expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n);
  });

  it('answers a result that breaks the outputSchema 500 and moves no money', async () => {
    const payer = await newPayer();
    const res = await paidPost(at('liar'), {}, payer);
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ success: false, error: 'Skill result does not match its outputSchema' });
    expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n);
  });

  it('withholds the result and answers 402 when settlement fails', async () => {
    const payer = await newPayer(PRICE);
    drainers.set(payer.address.toLowerCase(), payer);
    const payeeBefore = await stack.chain.balanceOf(payee);
    const res = await paidPost(at('drain'), {}, payer);
    expect(res.status).toBe(402);
    const text = await res.text();
    expect(text).not.toContain('result that must not leave unpaid');
    expect(JSON.parse(text).error).toBe('invalid_exact_evm_insufficient_balance');
    expect(runs.drain).toBe(1);
    expect(await stack.chain.balanceOf(payee)).toBe(payeeBefore);
    expect(logger.has('warn', 'settlement refused; result withheld')).toBe(true);
  });
});

describe('callbacks', () => {
  it('never lets a throwing or rejecting onCall / onError break the answer', async () => {
    const noisy = await serve(
      { echo: skills.echo, boom: skills.boom },
      loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
        logger,
        onCall: () => {
          throw new Error('onCall exploded');
        },
        onError: async () => {
          throw new Error('onError exploded');
        },
      }),
    );
    try {
      expect((await paidPost(`${noisy.url}/echo`, { text: 'ok' }, await newPayer())).status).toBe(200);
      expect((await paidPost(`${noisy.url}/boom`, {}, await newPayer())).status).toBe(500);
      // The callbacks run off the answer's path: their failures are logged once they reject.
      await Promise.all([logger.logged('warn', 'onCall failed'), logger.logged('warn', 'onError failed')]);
    } finally {
      await noisy.stop();
    }
  });
});
