/**
 * Free trials on the skill server: a payer proves its wallet with the 402's sign-in (x402
 * `sign-in-with-x`, an EIP-4361 message signed with viem, no gas) and gets the skill's free calls,
 * then pays as usual. Refusals (a replayed, foreign or expired sign-in), the durable count across a
 * restart, concurrency and the bound per client IP address, on anvil with real payments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSIWxPayload, encodeSIWxHeader, wrapFetchWithSIWx } from '@x402/extensions/sign-in-with-x';
import type { Address } from 'viem';
import { serve, skill, type SkillServer, type ServeOptions } from 'skill-market/creator';
import { decodePaymentRequired } from 'skill-market/x402';
import { loopbackServeOptions, paidPost, startPaymentStack, type PaymentStack } from '../support/skill-server';
import { trialChallenge, trialHeader, trialPost } from '../support/trial';

let stack: PaymentStack;
let payee: Address;
let folder: string;
let server: SkillServer;
let clock = 0;
/** A skill server's JSON answer. */
const answer = async (res: Response) => (await res.json()) as { error?: string; result?: unknown };
const now = () => Date.now() + clock;

const skills = {
  echo: skill({ price: '$0.001', trial: { calls: 2, period: 'day' } }, (input: { text: string }, { payer }) => ({
    text: input.text,
    payer,
  })),
  plain: skill({ price: '$0.001' }, () => ({ ok: true })),
  flaky: skill({ price: '$0.001', trial: { calls: 1, period: 'month' } }, (input: { fail: boolean }) => {
    if (input.fail) throw new Error('not today');
    return { ok: true };
  }),
};

const start = (extra: Partial<ServeOptions> = {}) =>
  serve(
    skills,
    loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, { trials: { store: folder, ipWallets: 100 }, now, ...extra }),
  );

beforeAll(async () => {
  stack = await startPaymentStack();
  payee = (await stack.chain.createAccount()).address;
  folder = await mkdtemp(join(tmpdir(), 'trials-'));
  server = await start();
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await stack?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('free trials', () => {
  it('declares the sign-in only on skills with a trial, bound to this server and skill', async () => {
    const declaration = await trialChallenge(`${server.url}/echo`);
    expect(declaration.info).toMatchObject({ domain: new URL(server.url).host, uri: `${server.url}/echo`, version: '1' });
    expect(declaration.supportedChains).toEqual([{ chainId: stack.chain.network, type: 'eip191' }]);
    const plain = await fetch(`${server.url}/plain`, { method: 'POST' });
    expect(decodePaymentRequired(plain.headers.get('PAYMENT-REQUIRED')!).extensions?.['sign-in-with-x']).toBeUndefined();
  });

  it('gives a wallet its free calls, then asks the next one to pay, which it does', async () => {
    const payer = await stack.chain.createAccount({ usdc: 10_000n });
    const url = `${server.url}/echo`;
    for (const left of [1, 0]) {
      const res = await trialPost(url, { text: 'hi' }, await trialHeader(url, payer));
      expect(res.status).toBe(200);
      expect(res.headers.get('X-Trial-Calls-Left')).toBe(String(left));
      expect((await answer(res)).result).toEqual({ text: 'hi', payer: payer.address });
    }
    const third = await trialPost(url, { text: 'hi' }, await trialHeader(url, payer));
    expect(third.status).toBe(402);
    expect((await answer(third)).error).toContain('Free trial used');
    // The period is a UTC day (echo's trial): the free calls come back at the next midnight.
    const resets = third.headers.get('X-Trial-Resets-At')!;
    expect(resets).toEndWith('T00:00:00.000Z');
    expect(Date.parse(resets) - Date.now()).toBeWithin(0, 86_400_001);
    expect(await stack.chain.balanceOf(payer.address)).toBe(10_000n);
    const paid = await paidPost(url, { text: 'paid' }, payer);
    expect(paid.status).toBe(200);
    expect(await stack.chain.balanceOf(payer.address)).toBe(10_000n - 1_000n);
  });

  it('takes a sign-in signed by the reference x402 client (@x402/extensions)', async () => {
    const payer = await stack.chain.createAccount();
    const url = `${server.url}/echo`;
    const declaration = await trialChallenge(url);
    const payload = await createSIWxPayload({ ...declaration.info, chainId: stack.chain.network, type: 'eip191' }, payer, url);
    const res = await trialPost(url, { text: 'ref' }, encodeSIWxHeader(payload));
    expect(res.status).toBe(200);
  });

  it('serves the free call to the reference client wrapper (wrapFetchWithSIWx), which signs the 402 and retries', async () => {
    const payer = await stack.chain.createAccount();
    const signedFetch = wrapFetchWithSIWx(fetch, payer);
    const res = await signedFetch(`${server.url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'wrapped' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('X-Trial-Calls-Left')).toBe('1');
    expect((await answer(res)).result).toEqual({ text: 'wrapped', payer: payer.address });
  });

  it('refuses a replayed sign-in, one for another domain or skill, one signed by another wallet, and an expired one', async () => {
    const payer = await stack.chain.createAccount();
    const url = `${server.url}/echo`;
    const header = await trialHeader(url, payer);
    expect((await trialPost(url, { text: 'a' }, header)).status).toBe(200);
    const replay = await trialPost(url, { text: 'a' }, header);
    expect(replay.status).toBe(402);
    expect((await answer(replay)).error).toContain('nonce is unknown or already used');

    const foreign = await trialHeader(url, payer, { edit: (d) => ({ ...d, info: { ...d.info, domain: 'evil.example' } }) });
    const refusedDomain = await trialPost(url, { text: 'a' }, foreign);
    expect(refusedDomain.status).toBe(402);
    expect((await answer(refusedDomain)).error).toContain('domain is not this server');

    const otherSkill = await trialHeader(url, payer, { edit: (d) => ({ ...d, info: { ...d.info, uri: `${server.url}/plain` } }) });
    expect((await answer(await trialPost(url, { text: 'a' }, otherSkill))).error).toContain('uri is not this skill');

    // Signed by one wallet, claimed for another.
    const other = await stack.chain.createAccount();
    const signed = JSON.parse(atob(await trialHeader(url, payer)));
    const forged = btoa(JSON.stringify({ ...signed, address: other.address }));
    expect((await answer(await trialPost(url, { text: 'a' }, forged))).error).toContain('signature is not the wallet');

    const late = await trialHeader(url, payer);
    clock = 6 * 60_000;
    try {
      const expired = await trialPost(url, { text: 'a' }, late);
      expect(expired.status).toBe(402);
      expect((await answer(expired)).error).toContain('expired');
    } finally {
      clock = 0;
    }
  });

  it('gives exactly its calls to a wallet calling many times at once', async () => {
    const payer = await stack.chain.createAccount();
    const url = `${server.url}/echo`;
    const headers = await Promise.all(Array.from({ length: 6 }, () => trialHeader(url, payer)));
    const answers = await Promise.all(headers.map((h) => trialPost(url, { text: 'x' }, h)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 402, 402, 402, 402]);
  });

  it('bounds the new trial wallets one client address brings in a period', async () => {
    const bounded = await start({ trials: { store: join(folder, 'bounded'), ipWallets: 2 } });
    const url = `${bounded.url}/echo`;
    const inProcess = (peer: string) => (request: Request) => bounded.fetch(request, peer);
    const send = inProcess('203.0.113.7');
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const payer = await stack.chain.createAccount();
      const res = await trialPost(url, { text: 'ip' }, await trialHeader(url, payer, { send }), send);
      statuses.push(res.status);
      if (res.status === 402) expect((await answer(res)).error).toContain('too many trial wallets from this address');
    }
    expect(statuses).toEqual([200, 200, 402]);
    // A wallet already admitted keeps its calls; another address brings its own wallets.
    const elsewhere = inProcess('198.51.100.9');
    const payer = await stack.chain.createAccount();
    expect((await trialPost(url, { text: 'ip' }, await trialHeader(url, payer, { send: elsewhere }), elsewhere)).status).toBe(200);
    await bounded.stop();
  });

  it('counts the wallets a trusted proxy forwards by the address it names, and ignores that header from anyone else', async () => {
    const proxied = await start({ trials: { store: join(folder, 'proxied'), ipWallets: 1, trustedProxies: ['10.0.0.2'] } });
    const url = `${proxied.url}/echo`;
    // Requests as they arrive: from a socket peer, with what the client (or a proxy) wrote in X-Forwarded-For.
    const from = (peer: string, forwardedFor: string) => (request: Request) => {
      const headers = new Headers(request.headers);
      headers.set('x-forwarded-for', forwardedFor);
      return proxied.fetch(new Request(request, { headers }), peer);
    };
    const tryFree = async (send: (request: Request) => Promise<Response>) => {
      const payer = await stack.chain.createAccount();
      return (await trialPost(url, { text: 'proxy' }, await trialHeader(url, payer, { send }), send)).status;
    };
    // Behind the proxy: two clients, one new wallet each; the first client's second wallet is refused.
    expect(await tryFree(from('10.0.0.2', '198.51.100.1'))).toBe(200);
    expect(await tryFree(from('10.0.0.2', '203.0.113.5, 198.51.100.2'))).toBe(200);
    expect(await tryFree(from('::ffff:10.0.0.2', '198.51.100.1'))).toBe(402);
    // A client that is no trusted proxy writes what it likes: its own address counts.
    expect(await tryFree(from('192.0.2.44', '198.51.100.3'))).toBe(200);
    expect(await tryFree(from('192.0.2.44', '198.51.100.4'))).toBe(402);
    await proxied.stop();
  });

  it('keeps the count across a restart of the server', async () => {
    const payer = await stack.chain.createAccount();
    const url = () => `${server.url}/echo`;
    expect((await trialPost(url(), { text: 'r' }, await trialHeader(url(), payer))).status).toBe(200);
    await server.stop();
    server = await start();
    const second = await trialPost(url(), { text: 'r' }, await trialHeader(url(), payer));
    expect(second.headers.get('X-Trial-Calls-Left')).toBe('0');
    await server.stop();
    server = await start();
    expect((await trialPost(url(), { text: 'r' }, await trialHeader(url(), payer))).status).toBe(402);
  });

  it('gives the trial call back when the handler fails, and answers a malformed sign-in 402 saying why', async () => {
    const payer = await stack.chain.createAccount();
    const url = `${server.url}/flaky`;
    expect((await trialPost(url, { fail: true }, await trialHeader(url, payer))).status).toBe(500);
    const ok = await trialPost(url, { fail: false }, await trialHeader(url, payer));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('X-Trial-Calls-Left')).toBe('0');
    const malformed = await trialPost(url, { fail: false }, 'not base64 at all');
    expect(malformed.status).toBe(402);
    expect((await answer(malformed)).error).toContain('SIGN-IN-WITH-X');
  });
});
