/**
 * Interop with the reference x402 stack (2.27), both directions, on the local chain:
 * - the reference client (@x402/fetch) pays a reference server (@x402/hono on Bun.serve) that
 *   verifies and settles through OUR facilitator over HTTP (HTTPFacilitatorClient);
 * - a payload signed with our SDK is accepted by that same server;
 * - the reference facilitator and ours give the same reasons for the same bad payments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { x402Client } from '@x402/core/client';
import { x402Facilitator } from '@x402/core/facilitator';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme as registerClientScheme } from '@x402/evm/exact/client';
import { registerExactEvmScheme as registerFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { wrapFetchWithPayment } from '@x402/fetch';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import { type Address, publicActions } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  decodePaymentRequired,
  decodeSettleResponse,
  encodePaymentPayload,
  parsePaymentRequirements,
  signAuthorization as signWithSdk,
} from 'skill-market/x402';
import { type LocalChain, startChain } from '../support/chain';
import { PRICE, type FacilitatorFixture, paymentBody, requirementsFor, startFacilitatorFixture } from '../support/facilitator';

let chain: LocalChain;
let ours: FacilitatorFixture;
let facilitatorUrl: string;
let server: ReturnType<typeof Bun.serve>;
let payee: Address;
let handlerRuns = 0;

beforeAll(async () => {
  chain = await startChain({ payers: 2, relayers: 2 });
  ours = await startFacilitatorFixture(chain, 'embedded');
  ours.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
  facilitatorUrl = `http://127.0.0.1:${ours.facilitator.app.server!.port}`;

  payee = (await chain.createAccount()).address;
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(
    chain.network,
    new ExactEvmServerScheme(),
  );
  const app = new Hono();
  app.use(
    paymentMiddleware(
      {
        'GET /weather': {
          accepts: {
            scheme: 'exact',
            network: chain.network,
            payTo: payee,
            price: {
              amount: PRICE.toString(),
              asset: chain.token.address,
              extra: { name: chain.token.name, version: chain.token.version },
            },
          },
          description: 'Weather report',
        },
      },
      resourceServer,
    ),
  );
  app.get('/weather', (c) => {
    handlerRuns++;
    return c.json({ weather: 'sunny' });
  });
  server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
}, 60_000);

afterAll(async () => {
  await server?.stop(true);
  await ours?.facilitator.app.stop();
  await ours?.close();
  await chain?.stop();
});

const weatherUrl = () => `http://127.0.0.1:${server.port}/weather`;

function referenceClient(account: ReturnType<typeof privateKeyToAccount>) {
  const client = new x402Client();
  registerClientScheme(client, { signer: account });
  client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.token.address }] });
  return wrapFetchWithPayment(fetch, client);
}

describe('the reference stack settling through our facilitator over HTTP', () => {
  it('the reference client pays the reference server; our facilitator moves exactly the price on chain', async () => {
    const payer = chain.accounts.payers[0]!;
    const [payerBefore, payeeBefore] = await Promise.all([chain.balanceOf(payer.address), chain.balanceOf(payee)]);
    const res = await referenceClient(payer)(weatherUrl());
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ weather: 'sunny' });
    const receipt = decodeSettleResponse(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, payer: payer.address, network: chain.network });
    expect(await chain.balanceOf(payer.address)).toBe(payerBefore - PRICE);
    expect(await chain.balanceOf(payee)).toBe(payeeBefore + PRICE);
    expect(await ours.facilitator.receipt(receipt.transaction)).toMatchObject({ status: 'confirmed', payee });
  });

  it('accepts a payment signed by our SDK from the terms in the PAYMENT-REQUIRED header', async () => {
    const unpaid = await fetch(weatherUrl());
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequired(unpaid.headers.get('PAYMENT-REQUIRED')!);
    const requirements = parsePaymentRequirements(required.accepts[0]);
    const payer = chain.accounts.payers[1]!;
    const payload = await signWithSdk(payer, requirements, { resource: required.resource });
    const paid = await fetch(weatherUrl(), { headers: { 'PAYMENT-SIGNATURE': encodePaymentPayload(payload) } });
    expect(paid.status).toBe(200);
    expect(decodeSettleResponse(paid.headers.get('PAYMENT-RESPONSE')!).success).toBe(true);
  });

  it('runs the paid handler once when one proof arrives 20 times at once (the reference alone runs it 20 times)', async () => {
    const unpaid = await fetch(weatherUrl());
    const required = decodePaymentRequired(unpaid.headers.get('PAYMENT-REQUIRED')!);
    const payload = await signWithSdk(chain.accounts.payers[0]!, parsePaymentRequirements(required.accepts[0]), {
      resource: required.resource,
    });
    const header = encodePaymentPayload(payload);
    const payeeBefore = await chain.balanceOf(payee);
    const runsBefore = handlerRuns;
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => fetch(weatherUrl(), { headers: { 'PAYMENT-SIGNATURE': header } })),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 402)).toHaveLength(19);
    expect(handlerRuns - runsBefore).toBe(1);
    expect(await chain.balanceOf(payee)).toBe(payeeBefore + PRICE);
  });

  it('answers /supported in the shape the reference client parses', async () => {
    const supported = await new HTTPFacilitatorClient({ url: facilitatorUrl }).getSupported();
    expect(supported.kinds).toContainEqual({ x402Version: 2, scheme: 'exact', network: chain.network });
    expect(supported.signers['eip155:*']).toEqual([chain.accounts.relayer.address]);
  });
});

describe('the reference facilitator and ours agree on reasons', () => {
  let reference: x402Facilitator;
  beforeAll(() => {
    const client = chain.walletClient(chain.accounts.relayers[1]!).extend(publicActions);
    reference = new x402Facilitator();
    registerFacilitatorScheme(reference, {
      signer: toFacilitatorEvmSigner({ ...client, address: chain.accounts.relayers[1]!.address } as unknown as Parameters<
        typeof toFacilitatorEvmSigner
      >[0]),
      networks: chain.network,
    });
  });

  const now = () => BigInt(Math.floor(Date.now() / 1000));
  const cases: [string, () => Promise<Awaited<ReturnType<typeof paymentBody>>>][] = [
    ['wrong amount', async () => paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee), { value: PRICE + 1n })],
    [
      'wrong payTo',
      async () => paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee), { to: chain.accounts.payee.address }),
    ],
    ['expired', async () => paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee), { validBefore: now() - 5n })],
    [
      'not yet valid',
      async () =>
        paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee), { validAfter: now() + 600n, validBefore: now() + 900n }),
    ],
    [
      'bad signature',
      async () =>
        paymentBody(chain, privateKeyToAccount(generatePrivateKey()), requirementsFor(chain, payee), {
          from: chain.accounts.payer.address,
        }),
    ],
    ['insufficient balance', async () => paymentBody(chain, await chain.createAccount({ usdc: 1n }), requirementsFor(chain, payee))],
  ];
  for (const [name, make] of cases) {
    it(`gives the reference's reason for: ${name}`, async () => {
      const body = await make();
      const theirs = await reference.verify(body.paymentPayload as unknown as PaymentPayload, body.paymentRequirements as never);
      const mine = await ours.facilitator.verify(body);
      expect(theirs.isValid).toBe(false);
      expect(mine).toMatchObject({ isValid: false, invalidReason: theirs.invalidReason, payer: theirs.payer });
    });
  }

  it('gives the reference reason for a replay of a settled proof', async () => {
    const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee));
    expect((await ours.facilitator.settle(body)).success).toBe(true);
    const theirs = await reference.verify(body.paymentPayload as unknown as PaymentPayload, body.paymentRequirements as never);
    expect((await ours.facilitator.verify(body)).invalidReason).toBe(theirs.invalidReason!);
  });
});
