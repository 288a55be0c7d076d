/**
 * The x402 reference client (@x402/fetch with @x402/evm's `batch-settlement` client) pays our
 * skill server over a payment channel, settled through @x402/evm's own facilitator on the local
 * chain: the 402 offers the channel after exact, one deposit then vouchers, the handler runs once per
 * call, replayed and reordered vouchers are refused with the corrective 402, a handler may charge
 * less than the price, claim + settle pay the receiver exactly what was charged, and the client's own
 * refund (GET on the skill's path) returns the rest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodePaymentResponseHeader } from '@x402/fetch';
import type { Address } from 'viem';
import { createSkillHandler, memoryChannelStore, type SettledCall, serve, skill, type SkillServer } from 'skill-market/creator';
import { batchSettlementDomain, decodeBase64Json, decodePaymentRequired, encodeBase64Json, voucherTypes } from 'skill-market/x402';
import { type LocalChain, receiverState, startChain, type TestAccount } from '../support/chain';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import { jsonPost as post } from '../support/auth';
import { fileChannels, referenceChannelClient, voucherProof } from '../support/channel-server';
import { chainAsset, loopbackServeOptions, recordingLogger } from '../support/skill-server';

const PRICE = 1_000n; // $0.001
let chain: LocalChain;
let facilitator: ReturnType<typeof startBatchFacilitator>;
let server: SkillServer;
let payee: Address;
let folder: string;
let runs = 0;

beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
  facilitator = startBatchFacilitator(chain, chain.accounts.relayer);
  payee = (await chain.createAccount()).address;
  folder = await mkdtemp(join(tmpdir(), 'serve-channels-'));
  const authorizer = await chain.createAccount();
  server = await serve(
    {
      echo: skill({ price: '$0.001' }, (input: unknown) => {
        runs++;
        return { echo: input, run: runs };
      }),
      metered: skill({ price: '$0.001' }, (input: { units: number }, { charge }) => {
        charge(BigInt(input.units) * 100n);
        return { units: input.units };
      }),
      dear: skill({ price: '$0.05' }, () => ({ ok: true })),
    },
    loopbackServeOptions(chain, facilitator.url, payee, { channels: fileChannels(authorizer, folder) }),
  );
}, 60_000);

afterAll(async () => {
  await server?.stop();
  facilitator?.stop();
  await chain?.stop();
  await rm(folder, { recursive: true, force: true });
});

/** @x402/fetch paying with @x402/evm's batch-settlement client (ten calls per deposit); records the proofs it sends. */
const referenceClient = (account: TestAccount) => referenceChannelClient(chain, account, { depositMultiplier: 10 });

describe('the reference batch-settlement client against our skill server', () => {
  it('offers exact first and the channel second for a cheap skill, and exact alone above the threshold', async () => {
    const cheap = await fetch(`${server.url}/echo`, post({}));
    expect(cheap.status).toBe(402);
    const offered = decodePaymentRequired(cheap.headers.get('PAYMENT-REQUIRED')!).accepts;
    expect(offered.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
    expect(offered[1]).toMatchObject({ amount: '1000', payTo: payee, extra: { withdrawDelay: 900, name: 'USD Coin', version: '2' } });
    const dear = await fetch(`${server.url}/dear`, post({}));
    expect(decodePaymentRequired(dear.headers.get('PAYMENT-REQUIRED')!).accepts.map((a) => a.scheme)).toEqual(['exact']);
  });

  it('takes one deposit then vouchers, runs the handler once per call, answers the spec’s payment responses, and is paid successes × price after claim and settle', async () => {
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const { pay } = referenceClient(payer);
    const receipts = [];
    for (let i = 1; i <= 5; i++) {
      const res = await pay(`${server.url}/echo`, post({ i }));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ success: true, result: { echo: { i }, run: i } });
      receipts.push(decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!) as unknown as Record<string, any>);
    }
    expect(runs).toBe(5);
    expect(receipts[0]).toMatchObject({ success: true, amount: `${10n * PRICE}`, extra: { chargedAmount: '1000' } });
    expect(receipts[0]!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    for (const [i, receipt] of receipts.slice(1).entries()) {
      expect(receipt).toMatchObject({ success: true, transaction: '', amount: '', payer: payer.address, network: chain.network });
      expect(receipt.extra).toMatchObject({
        chargedAmount: '1000',
        channelState: {
          balance: `${10n * PRICE}`,
          totalClaimed: '0',
          withdrawRequestedAt: 0,
          chargedCumulativeAmount: `${BigInt(i + 2) * PRICE}`,
        },
      });
    }
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 10n * PRICE);

    const round = await server.claimChannels();
    expect(round).toMatchObject({ channels: 1 });
    expect(await receiverState(chain, payee)).toMatchObject({ totalClaimed: 5n * PRICE, totalSettled: 5n * PRICE });
    expect(await chain.balanceOf(payee)).toBe(5n * PRICE);
    expect(await server.claimChannels()).toEqual({ channels: 0 });
  });

  it('answers a replayed voucher of the same call with its stored answer, and refuses it for another call and a voucher that skips ahead with the corrective 402, without running the handler', async () => {
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const { pay, proofs } = referenceClient(payer);
    for (const i of [1, 2]) expect((await pay(`${server.url}/echo`, post({ i }))).status).toBe(200);
    const before = runs;
    // The same voucher and input again (its answer was lost): the answer it paid for, charged once.
    const resent = await fetch(`${server.url}/echo`, post({ i: 2 }, { 'PAYMENT-SIGNATURE': proofs.at(-1)! }));
    expect(resent.status).toBe(200);
    expect(resent.headers.get('X-Payment-Replayed')).toBe('true');
    expect(runs).toBe(before);
    // The same voucher for another call: not paid for.
    const replay = await fetch(`${server.url}/echo`, post({ i: 3 }, { 'PAYMENT-SIGNATURE': proofs.at(-1)! }));
    expect(replay.status).toBe(402);
    const corrective = decodePaymentRequired(replay.headers.get('PAYMENT-REQUIRED')!);
    expect(corrective.error).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    const last = decodeBase64Json(proofs.at(-1)!, 'malformed_payment', 'proof') as Record<string, any>;
    expect(corrective.accepts[1]!.extra).toMatchObject({
      channelState: { channelId: last.payload.voucher.channelId, chargedCumulativeAmount: `${2n * PRICE}` },
      voucherState: { signedMaxClaimable: `${2n * PRICE}`, signature: last.payload.voucher.signature },
    });

    // A voucher for two calls ahead, properly signed: still not the next one.
    const ahead = await voucherProof(chain, proofs.at(-1)!, payer, 4n * PRICE);
    const skipped = await fetch(`${server.url}/echo`, post({}, { 'PAYMENT-SIGNATURE': ahead }));
    expect(skipped.status).toBe(402);
    expect(decodePaymentRequired(skipped.headers.get('PAYMENT-REQUIRED')!).error).toBe(
      'invalid_batch_settlement_evm_cumulative_amount_mismatch',
    );

    // A forged voucher for the right amount.
    const forged = await voucherProof(chain, proofs.at(-1)!, await chain.createAccount(), 3n * PRICE);
    const refused = await fetch(`${server.url}/echo`, post({}, { 'PAYMENT-SIGNATURE': forged }));
    expect(refused.status).toBe(402);
    expect(decodePaymentRequired(refused.headers.get('PAYMENT-REQUIRED')!).error).toBe('invalid_batch_settlement_evm_voucher_signature');
    expect(runs).toBe(before);

    // The client itself carries on from the server's charge.
    expect((await pay(`${server.url}/echo`, post({ i: 3 }))).status).toBe(200);
    expect(runs).toBe(before + 1);
  });

  it('charges what the handler reports within the voucher’s ceiling and claims exactly that', async () => {
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const { pay } = referenceClient(payer);
    await server.claimChannels(); // what earlier calls owe
    const before = await receiverState(chain, payee);
    for (const units of [4, 7]) {
      const res = await pay(`${server.url}/metered`, post({ units }));
      expect(res.status).toBe(200);
      const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!) as unknown as Record<string, any>;
      expect(receipt.extra.chargedAmount).toBe(`${BigInt(units) * 100n}`);
    }
    await server.claimChannels();
    const after = await receiverState(chain, payee);
    expect(after.totalClaimed - before.totalClaimed).toBe(1_100n);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 10n * PRICE); // the deposit; the rest stays in the channel
  });

  it('completes and executes a cooperative refund: claims what was charged and returns the rest, without running the handler', async () => {
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const { pay, proofs } = referenceClient(payer);
    await server.claimChannels(); // what other channels owe, so the receiver's totals below are this channel's
    const before = await receiverState(chain, payee);
    for (const i of [1, 2]) expect((await pay(`${server.url}/echo`, post({ i }))).status).toBe(200);
    const payerBefore = await chain.balanceOf(payer.address);
    const last = decodeBase64Json(proofs.at(-1)!, 'malformed_payment', 'proof') as Record<string, any>;
    const { channelConfig, voucher } = last.payload;
    const zeroCharge = await payer.signTypedData({
      domain: batchSettlementDomain(chain.chainId),
      types: voucherTypes,
      primaryType: 'Voucher',
      message: { channelId: voucher.channelId, maxClaimableAmount: 2n * PRICE },
    });
    const refund = {
      x402Version: 2,
      accepted: last.accepted,
      payload: {
        type: 'refund',
        channelConfig,
        voucher: { channelId: voucher.channelId, maxClaimableAmount: `${2n * PRICE}`, signature: zeroCharge },
      },
    };
    const ran = runs;
    const res = await fetch(`${server.url}/echo`, post({}, { 'PAYMENT-SIGNATURE': encodeBase64Json(refund) }));
    expect(res.status).toBe(200);
    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!) as unknown as Record<string, any>;
    expect(receipt).toMatchObject({ success: true, amount: `${8n * PRICE}`, extra: { channelState: { balance: `${2n * PRICE}` } } });
    expect(receipt.extra.chargedAmount).toBeUndefined();
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(runs).toBe(ran);
    expect(await chain.balanceOf(payer.address)).toBe(payerBefore + 8n * PRICE);
    const after = await receiverState(chain, payee);
    expect(after.totalClaimed - before.totalClaimed).toBe(2n * PRICE);
  });

  it('takes the reference client’s own refund (GET probe, then GET with the refund): the payer gets back deposit − charged', async () => {
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const { pay, scheme } = referenceClient(payer);
    for (const i of [1, 2, 3]) expect((await pay(`${server.url}/echo`, post({ i }))).status).toBe(200);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 10n * PRICE);
    const ran = runs;
    const receipt = await scheme.refund(`${server.url}/echo`);
    expect(receipt).toMatchObject({ success: true, amount: `${7n * PRICE}`, payer: payer.address });
    expect(runs).toBe(ran);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 3n * PRICE);
  });

  it('claims the channels that can be claimed when one of a batch cannot, and leaves that one for later', async () => {
    const store = memoryChannelStore();
    const authorizer = await chain.createAccount();
    const receiver = (await chain.createAccount()).address;
    const app = createSkillHandler(
      { echo: skill({ price: '$0.001' }, () => ({ ok: true })) },
      {
        payTo: receiver,
        facilitatorUrl: facilitator.url,
        network: chain.network,
        asset: chainAsset(chain),
        logger: recordingLogger(),
        channels: { receiverAuthorizerKey: authorizer.privateKey, store, claimWithinMs: 600_000, withdrawDelay: 900 },
      },
    );
    const served = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
    try {
      for (const payer of [await chain.createAccount({ usdc: 1_000_000n }), await chain.createAccount({ usdc: 1_000_000n })]) {
        const { pay } = referenceClient(payer);
        for (const i of [1, 2]) expect((await pay(`http://127.0.0.1:${served.port}/echo`, post({ i }))).status).toBe(200);
      }
      // One channel's stored voucher no longer checks out (as if its record were damaged).
      const [broken] = await store.list();
      const forger = await chain.createAccount();
      await store.update(broken!.channelId, async (current) => ({
        next: {
          ...current!,
          signature: await forger.signTypedData({
            domain: batchSettlementDomain(chain.chainId),
            types: voucherTypes,
            primaryType: 'Voucher',
            message: { channelId: broken!.channelId, maxClaimableAmount: BigInt(current!.signedMaxClaimable) },
          }),
        },
        value: undefined,
      }));
      expect(await app.claimChannels()).toMatchObject({ channels: 1 });
      expect(await receiverState(chain, receiver)).toMatchObject({ totalClaimed: 2n * PRICE, totalSettled: 2n * PRICE });
      expect(await app.claimChannels()).toEqual({ channels: 0 }); // the broken one waits
    } finally {
      served.stop(true);
      await app.close();
    }
  });

  it('reports a channel call with its channel, its cumulative charge and the charged amount in atomic units', async () => {
    const calls: SettledCall[] = [];
    const authorizer = await chain.createAccount();
    const app = createSkillHandler(
      { metered: skill({ price: '$0.001' }, (_input: unknown, { charge }) => charge('$0.0004')) },
      {
        payTo: payee,
        facilitatorUrl: facilitator.url,
        network: chain.network,
        asset: chainAsset(chain),
        logger: recordingLogger(),
        channels: { receiverAuthorizerKey: authorizer.privateKey, store: join(folder, 'reported') },
        onSettled: (call) => calls.push(call),
      },
    );
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const { pay } = referenceClient(payer);
    const served = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
    try {
      for (const i of [1, 2]) expect((await pay(`http://127.0.0.1:${served.port}/metered`, post({ i }))).status).toBe(200);
    } finally {
      served.stop(true);
      await app.close();
    }
    expect(calls).toHaveLength(2);
    expect(calls[1]).toMatchObject({
      skill: 'metered',
      amount: '0.0004',
      amountAtomic: '400',
      payer: payer.address,
      transaction: '',
      chargedCumulativeAmount: '800',
    });
    expect(calls[1]!.channelId).toMatch(/^0x[0-9a-f]{64}$/);
  });
});
