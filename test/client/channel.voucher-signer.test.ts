/**
 * A voucher signer apart from the paying wallet: our PaymentPipeline with
 * channelScheme({ voucherSigner }) pays the x402 reference batch-settlement server (@x402/hono) on
 * the local chain. The wallet signs the deposit only; a local key signs every voucher, and the
 * channel on chain names that key as its payerAuthorizer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { getAddress, type Hex } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import {
  channelScheme,
  createChannelReader,
  exactScheme,
  memoryChannelStore,
  PaymentPipeline,
  readAllowedAssets,
  toPaymentSigner,
  type Skill,
} from 'skill-market/client';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../../src/chain/batch-settlement';
import { type BatchServer, startBatchServer } from '../support/chain/batch-server';
import { countingAccount, useWorld } from './support/world';

const world = useWorld({ chain: true });
const PRICE = 1_000n; // $0.001
const MAX_DEPOSIT = 20n * PRICE;
let server: BatchServer;
let skill: Skill;

beforeAll(async () => {
  const name = `voucher-key-${crypto.randomUUID().slice(0, 8)}`;
  server = await startBatchServer(world.chain, { name, price: PRICE, exact: true });
  await world.creator.prove(server.payeeAccount);
  const res = await world.creator.register({
    name,
    endpoint: server.endpoint,
    price: '$0.001',
    paymentAddress: server.payee,
    network: world.chain.network,
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  skill = (await res.json()) as Skill;
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

describe('a channel whose vouchers a local key signs', () => {
  it('asks the wallet once for five calls (the deposit), and the channel on chain names the voucher key as payerAuthorizer', async () => {
    const wallet = countingAccount(await world.payer());
    const voucherKey = toPaymentSigner(generatePrivateKey());
    let vouchers = 0;
    const counted = {
      address: voucherKey.address,
      signTypedData: (data: Parameters<typeof voucherKey.signTypedData>[0]) => {
        vouchers++;
        return voucherKey.signTypedData(data);
      },
    };
    const pipeline = new PaymentPipeline({
      network: world.chain.network,
      signer: toPaymentSigner(wallet),
      schemes: [
        channelScheme({
          maxDeposit: MAX_DEPOSIT,
          store: memoryChannelStore(),
          chain: createChannelReader(world.chain.rpcUrl),
          voucherSigner: counted,
        }),
        exactScheme(),
      ],
      policy: { allowed: readAllowedAssets([{ network: world.chain.network, address: world.asset.address, decimals: 6 }]) },
      allowHttp: true,
    });
    const walletBefore = await world.chain.balanceOf(wallet.address);
    const from = await world.chain.publicClient.getBlockNumber();

    const first = await pipeline.call(skill, { i: 1 });
    expect(first.result).toEqual({ echo: { i: 1 }, n: 1 });
    expect(first.receipt).toMatchObject({ amount: '1000', payer: getAddress(wallet.address) });
    expect(first.receipt!.transaction).toMatch(/^0x[0-9a-f]{64}$/); // the deposit
    const afterDeposit = await world.chain.publicClient.getBlockNumber();
    for (let i = 2; i <= 5; i++) {
      const { result, receipt } = await pipeline.call(skill, { i });
      expect(result).toEqual({ echo: { i }, n: i });
      expect(receipt).toMatchObject({ amount: '1000', transaction: null });
    }

    expect(wallet.signatures).toBe(1);
    expect(vouchers).toBe(5);
    expect(await world.chain.publicClient.getBlockNumber()).toBe(afterDeposit); // no transaction per call
    expect(await world.chain.balanceOf(wallet.address)).toBe(walletBefore - 10n * PRICE); // ten calls' worth, the default

    const created = await world.chain.publicClient.getContractEvents({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      eventName: 'ChannelCreated',
      fromBlock: from,
    });
    expect(created).toHaveLength(1);
    const { channelId, config } = created[0]!.args as {
      channelId: Hex;
      config: { payer: string; payerAuthorizer: string; receiver: string };
    };
    expect(getAddress(config.payer)).toBe(getAddress(wallet.address));
    expect(getAddress(config.payerAuthorizer)).toBe(getAddress(voucherKey.address));
    expect(getAddress(config.receiver)).toBe(server.payee);
    const [balance, claimed] = await world.chain.publicClient.readContract({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      functionName: 'channels',
      args: [channelId],
    });
    expect([balance, claimed]).toEqual([10n * PRICE, 0n]);
  });
});
