/** The reference x402 client (@x402/fetch 2.27) pays our skill server, settling through our facilitator. */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { decodeSettleResponse } from 'skill-market/x402';
import type { TestAccount } from '../support/chain';
import { startPaymentStack, type PaymentStack, loopbackServeOptions } from '../support/skill-server';
import { referenceExactFetch } from '../support/reference-fetch';

let stack: PaymentStack;
let server: SkillServer;
let payee: Address;
let runs = 0;

beforeAll(async () => {
  stack = await startPaymentStack();
  payee = (await stack.chain.createAccount()).address;
  server = await serve(
    {
      shout: skill(
        {
          price: '$0.02',
          description: 'Upper-cases text',
          inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        },
        ({ text }: { text: string }) => {
          runs++;
          return { shout: text.toUpperCase() };
        },
      ),
      broken: skill({ price: '$0.02' }, () => {
        throw new Error('broken on purpose');
      }),
    },
    loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee),
  );
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await stack?.close();
});

const referenceFetch = (account: TestAccount) => referenceExactFetch(stack.chain, account);

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('the reference client against our skill server', () => {
  it('pays the price from the PAYMENT-REQUIRED header and gets the result with a receipt', async () => {
    const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
    const res = await referenceFetch(payer)(`${server.url}/shout`, post({ text: 'hello' }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ success: true, result: { shout: 'HELLO' } });
    expect(decodeSettleResponse(res.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({ success: true, payer: payer.address });
    expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n - 20_000n);
    expect(await stack.chain.balanceOf(payee)).toBe(20_000n);
    expect(runs).toBe(1);
  });

  it('is not charged when the handler fails', async () => {
    const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
    const res = await referenceFetch(payer)(`${server.url}/broken`, post({}));
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ success: false, error: 'broken on purpose' });
    expect(await stack.chain.balanceOf(payer.address)).toBe(1_000_000n);
  });
});
