/**
 * Usage-based prices: the x402 reference client (@x402/fetch with @x402/evm's upto client) pays our
 * skill server's `upto` offer, settled through our facilitator on the local chain. The payer signs
 * the price as a maximum; the handler's charge (less) is what moves, the full maximum when the
 * handler charges nothing, nothing when it fails; a replayed proof does not run the handler again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { x402Client } from '@x402/core/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import type { Address } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { decodePaymentRequired } from 'skill-market/x402';
import { jsonPost as post } from '../support/auth';
import { type LocalChain, startChain, type TestAccount } from '../support/chain';
import { approvePermit2 } from '../support/chain/upto';
import { type FacilitatorFixture, startFacilitatorFixture } from '../support/facilitator';
import { localServeOptions, recordingLogger } from '../support/skill-server';

let chain: LocalChain;
let facilitator: FacilitatorFixture;
let server: SkillServer;
let payee: Address;
let runs = 0;

beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
  facilitator = await startFacilitatorFixture(chain, 'embedded');
  facilitator.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
  payee = (await chain.createAccount()).address;
  server = await serve(
    {
      metered: skill({ price: '$0.01', upto: true }, (input: { units: number }, { charge }) => {
        runs++;
        charge(BigInt(input.units) * 100n);
        return { units: input.units };
      }),
      whole: skill({ price: '$0.002', upto: true }, () => ({ ok: true })),
      broken: skill({ price: '$0.01', upto: true }, () => {
        throw new Error('out of order');
      }),
      fixed: skill({ price: '$0.01' }, () => ({ ok: true })),
    },
    localServeOptions(chain, facilitator, payee, recordingLogger()),
  );
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await facilitator?.facilitator.app.stop();
  await facilitator?.close();
  await chain?.stop();
});

/** @x402/fetch paying with @x402/evm's upto client alone, in the chain's token; records the proofs it sends. */
function referenceUptoFetch(account: TestAccount) {
  const client = new x402Client().register(chain.network, new UptoEvmScheme(account));
  client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.token.address }] });
  const proofs: string[] = [];
  const recording = (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input as string, init);
    const proof = request.headers.get('PAYMENT-SIGNATURE');
    if (proof) proofs.push(proof);
    return fetch(request);
  }) as typeof fetch;
  return { pay: wrapFetchWithPayment(recording, client), proofs };
}

async function approvedPayer() {
  const payer = await chain.createAccount({ usdc: 100_000n });
  await approvePermit2(chain, payer);
  return payer;
}

describe('the reference upto client against our skill server', () => {
  it('offers upto after exact, its maximum the price, naming the facilitator that settles; and not for a skill without upto', async () => {
    const res = await fetch(`${server.url}/metered`, post({ units: 1 }));
    expect(res.status).toBe(402);
    const accepts = decodePaymentRequired(res.headers.get('PAYMENT-REQUIRED')!).accepts;
    expect(accepts.map((a) => a.scheme)).toEqual(['exact', 'upto']);
    expect(accepts[1]).toEqual({
      scheme: 'upto',
      network: chain.network,
      amount: '10000',
      asset: chain.token.address,
      payTo: payee,
      maxTimeoutSeconds: accepts[0]!.maxTimeoutSeconds,
      extra: { name: 'USD Coin', version: '2', assetTransferMethod: 'permit2', facilitatorAddress: chain.accounts.relayer.address },
    });
    const fixed = await fetch(`${server.url}/fixed`, post({}));
    expect(decodePaymentRequired(fixed.headers.get('PAYMENT-REQUIRED')!).accepts.map((a) => a.scheme)).toEqual(['exact']);
  });

  it("charges the handler's charge, less than the maximum: exactly that moves, and PAYMENT-RESPONSE says so", async () => {
    const payer = await approvedPayer();
    const { pay } = referenceUptoFetch(payer);
    expect([await chain.balanceOf(payer.address), await chain.balanceOf(payee)]).toEqual([100_000n, 0n]);
    const before = runs;

    const res = await pay(`${server.url}/metered`, post({ units: 37 }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: unknown }).result).toEqual({ units: 37 });
    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, payer: payer.address, amount: '3700', network: chain.network });
    expect([await chain.balanceOf(payer.address), await chain.balanceOf(payee)]).toEqual([96_300n, 3_700n]);
    expect(runs).toBe(before + 1);
  });

  it('charges the full maximum when the handler says nothing', async () => {
    const payer = await approvedPayer();
    const payeeBefore = await chain.balanceOf(payee);
    const res = await referenceUptoFetch(payer).pay(`${server.url}/whole`, post({}));
    expect(res.status).toBe(200);
    expect(await chain.balanceOf(payer.address)).toBe(98_000n);
    expect(await chain.balanceOf(payee)).toBe(payeeBefore + 2_000n);
  });

  it('charges nothing when the handler fails', async () => {
    const payer = await approvedPayer();
    const payeeBefore = await chain.balanceOf(payee);
    const res = await referenceUptoFetch(payer).pay(`${server.url}/broken`, post({}));
    expect(res.status).toBe(500);
    expect(await chain.balanceOf(payer.address)).toBe(100_000n);
    expect(await chain.balanceOf(payee)).toBe(payeeBefore);
  });

  it('answers a replayed proof with the 402 without running the handler again, moving nothing more', async () => {
    const payer = await approvedPayer();
    const { pay, proofs } = referenceUptoFetch(payer);
    expect((await pay(`${server.url}/metered`, post({ units: 5 }))).status).toBe(200);
    const after = { runs, payer: await chain.balanceOf(payer.address) };
    expect(after.payer).toBe(99_500n);

    const replay = await fetch(`${server.url}/metered`, {
      ...post({ units: 5 }),
      headers: { 'content-type': 'application/json', 'PAYMENT-SIGNATURE': proofs[0]! },
    });
    expect(replay.status).toBe(402);
    expect(decodePaymentRequired(replay.headers.get('PAYMENT-REQUIRED')!).error).toBe('permit2_invalid_nonce');
    expect(runs).toBe(after.runs);
    expect(await chain.balanceOf(payer.address)).toBe(99_500n);
  });
});

describe('a facilitator that does not settle upto', () => {
  it('leaves the upto offer out, sells the skill by exact at its price, and says so at start', async () => {
    const exactOnly = await startFacilitatorFixture(chain, 'embedded', { relayers: [chain.accounts.relayer], schemes: ['exact'] });
    exactOnly.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
    const logger = recordingLogger();
    const plain = await serve(
      { metered: skill({ price: '$0.01', upto: true }, () => ({ ok: true })) },
      localServeOptions(chain, exactOnly, payee, logger),
    );
    try {
      const res = await fetch(`${plain.url}/metered`, post({}));
      expect(decodePaymentRequired(res.headers.get('PAYMENT-REQUIRED')!).accepts.map((a) => a.scheme)).toEqual(['exact']);
      expect(logger.has('warn', 'does not list upto')).toBe(true);
    } finally {
      await plain.stop();
      await exactOnly.facilitator.app.stop();
      await exactOnly.close();
    }
  });
});
