/**
 * A page in real Chromium, served from another origin than the skill server, pays and calls a
 * skill with fetch(): it must be able to read PAYMENT-REQUIRED from the 402 and PAYMENT-RESPONSE
 * from the 200 (browsers hide unexposed headers), and a server restricted to other origins must
 * be unreadable to it. The proof is signed in the test process with a viem account, as a wallet would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Address } from 'viem';
import { serve, skill, type ServeOptions, type SkillServer } from 'skill-market/creator';
import {
  decodePaymentRequired,
  decodeSettleResponse,
  encodePaymentPayload,
  parsePaymentRequirements,
  signAuthorization,
} from 'skill-market/x402';
import { balances, startPaymentStack, type PaymentStack, loopbackServeOptions } from '../support/skill-server';
import { CHROMIUM } from '../support/web';

const PRICE = 10_000n;
const echo = skill(
  { price: '$0.01', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  ({ text }: { text: string }) => ({ echo: text }),
);

let stack: PaymentStack;
let payee: Address;
let browser: Browser;
let page: Page;
let site: ReturnType<typeof Bun.serve>;
let pageOrigin: string;
const servers: SkillServer[] = [];

const start = async (cors?: ServeOptions['cors']) => {
  const server = await serve(
    { echo },
    loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
      ...(cors === undefined ? {} : { cors }),
    }),
  );
  servers.push(server);
  return server;
};

/** fetch() from the page: what its script can see of the answer, or the error the browser raised. */
const fromPage = (url: string, headers: Record<string, string> = {}) =>
  page.evaluate(
    async ({ url, headers }) => {
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ text: 'from a page' }),
        });
        return {
          status: res.status,
          paymentRequired: res.headers.get('PAYMENT-REQUIRED'),
          paymentResponse: res.headers.get('PAYMENT-RESPONSE'),
          body: await res.json(),
        };
      } catch (error) {
        return { error: String(error) };
      }
    },
    { url, headers },
  );

beforeAll(async () => {
  stack = await startPaymentStack({ payers: 1 });
  payee = (await stack.chain.createAccount()).address;
  // The page's own origin: localhost on another port, so every call to the skill is cross-origin.
  site = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () => new Response('<!doctype html><title>page</title><p>a page', { headers: { 'content-type': 'text/html' } }),
  });
  pageOrigin = `http://localhost:${site.port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage();
  await page.goto(`${pageOrigin}/`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  site?.stop(true);
  for (const server of servers) await server.stop();
  await stack?.close();
});

describe('a browser page calling a skill server on another origin', () => {
  it('reads the terms from the 402, pays with PAYMENT-SIGNATURE and reads the receipt from the 200', async () => {
    const server = await start();
    const unpaid = await fromPage(`${server.url}/echo`);
    expect(unpaid).toMatchObject({ status: 402 });
    expect(unpaid.paymentRequired).toBeString();
    const required = decodePaymentRequired(unpaid.paymentRequired!);
    const payer = stack.chain.accounts.payers[0]!;
    const before = await balances(stack.chain, payer.address, payee);
    const proof = encodePaymentPayload(
      await signAuthorization(payer, parsePaymentRequirements(required.accepts[0]), { resource: required.resource }),
    );

    const paid = await fromPage(`${server.url}/echo`, { 'PAYMENT-SIGNATURE': proof });
    expect(paid).toMatchObject({ status: 200, body: { success: true, result: { echo: 'from a page' } } });
    const receipt = decodeSettleResponse(paid.paymentResponse!);
    expect(receipt).toMatchObject({ success: true, payer: payer.address, network: stack.chain.network });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await balances(stack.chain, payer.address, payee)).toEqual([before[0] - PRICE, before[1] + PRICE]);
  });

  it('is served to a listed origin and blocked for a page of any other origin, or with CORS off', async () => {
    const listed = await start({ origins: [pageOrigin] });
    expect(await fromPage(`${listed.url}/echo`)).toMatchObject({ status: 402, paymentRequired: expect.any(String) });
    const other = await start({ origins: ['https://app.example'] });
    expect(await fromPage(`${other.url}/echo`)).toEqual({ error: 'TypeError: Failed to fetch' });
    const off = await start(false);
    expect(await fromPage(`${off.url}/echo`)).toEqual({ error: 'TypeError: Failed to fetch' });
  });
});
