/**
 * Our x402BatchSettlement, driven by the x402 reference stack itself: @x402/evm 2.27's
 * `batch-settlement` client (through @x402/fetch), server (through @x402/hono and its channel
 * manager) and facilitator (x402Facilitator over HTTP), on anvil with our EIP-3009 USDC. Each step
 * is checked on chain: balances, channel state and the contract's events. The steps build on each
 * other (one channel through its whole life), so they run in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as ClientScheme, computeChannelId } from '@x402/evm/batch-settlement/client';
import { BatchSettlementEvmScheme as ServerScheme } from '@x402/evm/batch-settlement/server';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import { type Hex, getAbiItem, parseEventLogs, slice, toFunctionSelector } from 'viem';
import {
  BATCH_SETTLEMENT_ADDRESS,
  type ChannelConfig,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  batchSettlementAbi,
} from '../../../src/chain/batch-settlement';
import {
  type LocalChain,
  type TestAccount,
  channelState,
  receiverState,
  settlementEvents,
  settlementRevert,
  settlementTx,
  startChain,
  usdCoinAbi,
} from '../../support/chain';
import { startBatchFacilitator } from '../../support/chain/batch-facilitator';

const PRICE = 1_000n; // per request, atomic USDC
const DEPOSIT = 10n * PRICE; // the client's deposit multiplier below

let chain: LocalChain;
let payer: TestAccount;
let payee: TestAccount;
let url: string;
let pay: ReturnType<typeof wrapFetchWithPayment>;
let clientScheme: ClientScheme;
let manager: ReturnType<ServerScheme['createChannelManager']>;
let config: ChannelConfig;
let handled = 0;
const servers: { stop(force?: boolean): unknown }[] = [];

beforeAll(async () => {
  chain = await startChain();
  payer = chain.accounts.payer;
  payee = chain.accounts.payee;

  // Facilitator: x402Facilitator + the batch-settlement facilitator scheme, relaying from the relayer.
  const facilitator = startBatchFacilitator(chain, chain.accounts.relayer);
  servers.push({ stop: facilitator.stop });
  const facilitatorClient = facilitator.client;

  // Resource server: the server scheme owns the receiver-authorizer key; 15-minute withdraw delay.
  const authorizer = await chain.createAccount();
  const serverScheme = new ServerScheme(payee.address, { receiverAuthorizerSigner: authorizer, withdrawDelay: 900 });
  const resourceServer = new x402ResourceServer(facilitatorClient).register(chain.network, serverScheme);
  const price = { amount: `${PRICE}`, asset: chain.token.address, extra: { name: chain.token.name, version: chain.token.version } };
  const app = new Hono();
  app.use(
    paymentMiddleware(
      {
        'GET /data': { accepts: { scheme: 'batch-settlement', network: chain.network, payTo: payee.address, price }, description: 'Data' },
      },
      resourceServer,
    ),
  );
  app.get('/data', (c) => {
    handled++;
    return c.json({ data: handled });
  });
  const resource = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  servers.push(resource);
  url = `http://127.0.0.1:${resource.port}/data`;
  manager = serverScheme.createChannelManager(facilitatorClient, chain.network, chain.token.address);

  // Client: the batch-settlement client scheme, depositing ten requests' worth at a time.
  clientScheme = new ClientScheme(toClientEvmSigner(payer, chain.publicClient as unknown as Parameters<typeof toClientEvmSigner>[1]), {
    depositPolicy: { depositMultiplier: 10 },
  });
  const client = new x402Client().register(chain.network, clientScheme);
  client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.token.address }] });
  pay = wrapFetchWithPayment(fetch, client);

  const probe = await fetch(url);
  expect(probe.status).toBe(402);
  const [requirements] = decodePaymentRequiredHeader(probe.headers.get('PAYMENT-REQUIRED')!).accepts;
  config = clientScheme.buildChannelConfig(requirements!) as ChannelConfig;
}, 60_000);

afterAll(async () => {
  for (const server of servers) server.stop(true);
  await chain?.stop();
});

/** A paid request; returns its decoded PAYMENT-RESPONSE. */
async function paidRequest() {
  const res = await pay(url);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ data: handled });
  return decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
}

const receipt = (hash: string) => chain.publicClient.getTransactionReceipt({ hash: hash as Hex });
const selector = (name: 'deposit' | 'claimWithSignature' | 'multicall') =>
  toFunctionSelector(getAbiItem({ abi: batchSettlementAbi, name }));
const selectorOf = async (hash: string) => slice((await chain.publicClient.getTransaction({ hash: hash as Hex })).input, 0, 4);
const tokenBalance = (address: `0x${string}`) => chain.balanceOf(address);

describe('the x402 reference batch-settlement stack on our contract', () => {
  let payerStart: bigint;

  it('deposits through the ERC-3009 collector on the first paid request and opens the channel', async () => {
    payerStart = await tokenBalance(payer.address);
    const settled = await paidRequest();
    expect(settled).toMatchObject({ success: true, amount: `${DEPOSIT}` });

    const { channelId, balance, totalClaimed } = await channelState(chain, config);
    expect(channelId).toBe(computeChannelId(config, chain.network));
    expect(
      await chain.publicClient.readContract({
        address: BATCH_SETTLEMENT_ADDRESS,
        abi: batchSettlementAbi,
        functionName: 'getChannelId',
        args: [config],
      }),
    ).toBe(channelId);
    expect([balance, totalClaimed]).toEqual([DEPOSIT, 0n]);

    const deposited = await receipt(settled.transaction);
    expect(await selectorOf(settled.transaction)).toBe(selector('deposit'));
    expect(settlementEvents(deposited)).toEqual([
      ['ChannelCreated', { channelId, config }],
      ['Deposited', { channelId, sender: chain.accounts.relayer.address, amount: DEPOSIT, balance: DEPOSIT }],
    ]);
    const transfers = parseEventLogs({ abi: usdCoinAbi, eventName: 'Transfer', logs: deposited.logs }).map((l) => l.args);
    expect(transfers).toEqual([
      { from: payer.address, to: ERC3009_DEPOSIT_COLLECTOR_ADDRESS, value: DEPOSIT },
      { from: ERC3009_DEPOSIT_COLLECTOR_ADDRESS, to: BATCH_SETTLEMENT_ADDRESS, value: DEPOSIT },
    ]);
    expect(await tokenBalance(payer.address)).toBe(payerStart - DEPOSIT);
    expect(await tokenBalance(BATCH_SETTLEMENT_ADDRESS)).toBe(DEPOSIT);
    expect(await tokenBalance(ERC3009_DEPOSIT_COLLECTOR_ADDRESS)).toBe(0n);
  });

  it('pays later requests with off-chain vouchers: no transaction, no change on chain', async () => {
    const block = await chain.publicClient.getBlockNumber();
    for (let i = 2; i <= 5; i++) {
      const settled = await paidRequest();
      expect(settled).toMatchObject({ success: true, transaction: '' });
      expect((settled.extra as { channelState: { chargedCumulativeAmount: string } }).channelState.chargedCumulativeAmount).toBe(
        `${BigInt(i) * PRICE}`,
      );
    }
    expect(handled).toBe(5);
    expect(await chain.publicClient.getBlockNumber()).toBe(block);
    expect(await channelState(chain, config)).toMatchObject({ balance: DEPOSIT, totalClaimed: 0n });
  });

  it('claims the latest voucher with claimWithSignature, then sweeps the claim to the receiver with settle', async () => {
    const [claimed, ...more] = await manager.claim();
    expect(more).toEqual([]);
    expect(claimed).toMatchObject({ vouchers: 1 });
    expect(await selectorOf(claimed!.transaction)).toBe(selector('claimWithSignature'));
    const { channelId } = await channelState(chain, config);
    expect(settlementEvents(await receipt(claimed!.transaction))).toEqual([
      ['Claimed', { channelId, sender: chain.accounts.relayer.address, amount: 5n * PRICE, totalClaimed: 5n * PRICE }],
    ]);
    expect(await channelState(chain, config)).toMatchObject({ balance: DEPOSIT, totalClaimed: 5n * PRICE });
    expect(await receiverState(chain, payee.address)).toEqual({ totalClaimed: 5n * PRICE, totalSettled: 0n });
    expect(await tokenBalance(payee.address)).toBe(0n); // claiming moves no tokens

    const { transaction } = await manager.settle();
    expect(settlementEvents(await receipt(transaction))).toEqual([
      ['Settled', { receiver: payee.address, token: chain.token.address, sender: chain.accounts.relayer.address, amount: 5n * PRICE }],
    ]);
    expect(await tokenBalance(payee.address)).toBe(5n * PRICE);
    expect(await tokenBalance(BATCH_SETTLEMENT_ADDRESS)).toBe(DEPOSIT - 5n * PRICE);
    expect(await receiverState(chain, payee.address)).toEqual({ totalClaimed: 5n * PRICE, totalSettled: 5n * PRICE });
  });

  it('refunds cooperatively: claims outstanding vouchers and refunds in one multicall, then refunds the rest', async () => {
    await paidRequest();
    await paidRequest(); // 7 requests charged, 5 claimed
    const { channelId } = await channelState(chain, config);
    const before = await tokenBalance(payer.address);

    const partial = await clientScheme.refund(url, { amount: `${PRICE}` });
    expect(partial).toMatchObject({ success: true, amount: `${PRICE}` });
    expect(await selectorOf(partial.transaction)).toBe(selector('multicall'));
    expect(settlementEvents(await receipt(partial.transaction))).toEqual([
      ['Claimed', { channelId, sender: chain.accounts.relayer.address, amount: 2n * PRICE, totalClaimed: 7n * PRICE }],
      ['Refunded', { channelId, sender: chain.accounts.relayer.address, amount: PRICE }],
    ]);
    expect(await channelState(chain, config)).toMatchObject({ balance: DEPOSIT - PRICE, totalClaimed: 7n * PRICE, refundNonce: 1n });
    expect(await tokenBalance(payer.address)).toBe(before + PRICE);

    const full = await clientScheme.refund(url);
    const rest = DEPOSIT - PRICE - 7n * PRICE;
    expect(full).toMatchObject({ success: true, amount: `${rest}` });
    // The server re-sends the already claimed voucher with it: a claim that raises nothing is a no-op.
    expect(await selectorOf(full.transaction)).toBe(selector('multicall'));
    // Everything unclaimed went back, but claimed funds stay on the channel's books: not closed.
    expect(settlementEvents(await receipt(full.transaction))).toEqual([
      ['Refunded', { channelId, sender: chain.accounts.relayer.address, amount: rest }],
    ]);
    expect(await channelState(chain, config)).toMatchObject({ balance: 7n * PRICE, totalClaimed: 7n * PRICE, refundNonce: 2n });
    expect(await tokenBalance(payer.address)).toBe(before + PRICE + rest);
  });

  it('tops the channel up again, and a timed withdrawal pays out only after the delay, net of what was claimed meanwhile', async () => {
    const topUp = await paidRequest(); // the client recovers the channel from chain and deposits again
    const topUpAmount = BigInt(topUp.amount!);
    expect(topUpAmount).toBeGreaterThan(0n);
    const { channelId } = await channelState(chain, config);
    expect(settlementEvents(await receipt(topUp.transaction))).toEqual([
      ['Deposited', { channelId, sender: chain.accounts.relayer.address, amount: topUpAmount, balance: 7n * PRICE + topUpAmount }],
    ]); // the channel was never empty: no second ChannelCreated
    await paidRequest();
    await paidRequest(); // 10 requests charged, 7 claimed

    const escrow = topUpAmount; // balance − totalClaimed
    const initiated = await settlementTx(chain, payer, 'initiateWithdraw', [config, escrow]);
    const initiatedAt = Number((await chain.publicClient.getBlock({ blockNumber: initiated.blockNumber })).timestamp);
    expect(settlementEvents(initiated)).toEqual([['WithdrawInitiated', { channelId, amount: escrow, finalizeAfter: initiatedAt + 900 }]]);
    expect(await channelState(chain, config)).toMatchObject({ withdrawAmount: escrow, withdrawInitiatedAt: initiatedAt });

    // The grace period lets the server claim what it is owed.
    const [claimed] = await manager.claim();
    expect(settlementEvents(await receipt(claimed!.transaction))).toEqual([
      ['Claimed', { channelId, sender: chain.accounts.relayer.address, amount: 3n * PRICE, totalClaimed: 10n * PRICE }],
    ]);
    expect(await settlementRevert(chain, payer.address, 'finalizeWithdraw', [config])).toEqual({
      errorName: 'WithdrawalNotReady',
      args: [channelId, BigInt(initiatedAt + 900)],
    });

    await chain.testClient.increaseTime({ seconds: 900 });
    await chain.testClient.mine({ blocks: 1 });
    const before = await tokenBalance(payer.address);
    const finalized = await settlementTx(chain, payer, 'finalizeWithdraw', [config]);
    const paidOut = escrow - 3n * PRICE;
    expect(settlementEvents(finalized)).toEqual([['WithdrawFinalized', { channelId, sender: payer.address, amount: paidOut }]]);
    expect(await tokenBalance(payer.address)).toBe(before + paidOut);
    expect(await channelState(chain, config)).toMatchObject({
      balance: 10n * PRICE,
      totalClaimed: 10n * PRICE,
      withdrawAmount: 0n,
      withdrawInitiatedAt: 0,
    });

    await manager.settle();
    // Ten requests paid, nothing more, nothing less; the contract keeps nothing.
    expect(await tokenBalance(payee.address)).toBe(10n * PRICE);
    expect(await tokenBalance(payer.address)).toBe(payerStart - 10n * PRICE);
    expect(await tokenBalance(BATCH_SETTLEMENT_ADDRESS)).toBe(0n);
    expect(handled).toBe(10);
  });
});
