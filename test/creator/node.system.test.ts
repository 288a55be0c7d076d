/** The creator SDK on Node 20+: serve() listens with node:http and takes a paid call end to end. */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { join } from 'node:path';
import { decodeSettleResponse } from 'skill-market/x402';
import { paidPost, postJson, startPaymentStack, type PaymentStack } from '../support/skill-server';
import { inheritedEnv } from '../support/process';

let stack: PaymentStack;
beforeAll(async () => {
  stack = await startPaymentStack();
}, 60_000);
afterAll(() => stack?.close());

describe('serve() on Node', () => {
  it('answers /health, asks 402, validates input and settles a paid call; stops on SIGTERM', async () => {
    const payee = await stack.chain.createAccount();
    const child = Bun.spawn(['node', '--import', 'tsx', join(import.meta.dir, 'fixtures/node-skill-server.ts')], {
      cwd: join(import.meta.dir, '../..'),
      env: {
        ...inheritedEnv(),
        HOME: process.env.HOME ?? '/tmp',
        MARKET_WALLET_ADDRESS: payee.address,
        SKILL_TEST_FACILITATOR: stack.facilitatorUrl,
        SKILL_TEST_NETWORK: stack.chain.network,
        SKILL_TEST_ASSET: JSON.stringify(stack.asset),
      },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    try {
      const reader = child.stdout.getReader();
      const { value } = await reader.read();
      reader.releaseLock();
      const { url, payTo } = JSON.parse(new TextDecoder().decode(value)) as { url: string; payTo: string };
      expect(payTo).toBe(payee.address);

      expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ status: 'ok', skills: ['greet'] });
      expect((await postJson(`${url}/greet`, { nom: 'x' }, { 'X-Payment': 'e30=' })).status).toBe(400);
      expect((await fetch(`${url}/greet`, { method: 'POST', headers: { 'X-Payment': 'e30=' }, body: '{oops' })).status).toBe(400);
      expect((await fetch(`${url}/greet`, { method: 'POST', body: '{oops' })).status).toBe(402);
      expect((await postJson(`${url}/greet`, { name: 'x' })).status).toBe(402);

      const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
      const res = await paidPost(`${url}/greet`, { name: 'node' }, payer);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ success: true, result: { greeting: 'hello node', runtime: 'node' } });
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(decodeSettleResponse(res.headers.get('PAYMENT-RESPONSE')!).success).toBe(true);
      expect(await stack.chain.balanceOf(payee.address)).toBe(10_000n);

      child.kill('SIGTERM');
      expect(await child.exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);
});
