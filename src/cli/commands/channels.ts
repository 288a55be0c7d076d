import { parseArgs } from 'node:util';
import { fileChannelStore } from 'skill-market';
import type { Hex } from 'skill-market/x402';
import { createPublicClient, createWalletClient, http } from 'viem';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../../chain/batch-settlement';
import { readClientChain } from '../../config';
import { CommandFailure } from '../consumer';
import { UsageError } from '../errors';
import { CLIENT_FLAGS, channelFile, clientFrom, payingAccount, printJson, reportClientFailures, WALLET_FLAGS } from '../market-client';

/**
 * `market channels [--withdraw ID | --finalize ID] [--json]`: the payment channels `market call`
 * opened (server, deposit, charged, and with MARKET_RPC_URL what the server claimed on chain).
 * `--withdraw` starts the contract's timed withdrawal of everything not claimed yet (the server
 * may still claim what it is owed during the channel's withdraw delay); `--finalize` pays it out
 * after the delay. Both are transactions from the paying wallet and need MARKET_RPC_URL.
 */
export async function channelsCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: { ...CLIENT_FLAGS, ...WALLET_FLAGS, withdraw: { type: 'string' }, finalize: { type: 'string' } },
  });
  if (positionals.length > 0) throw new UsageError(`channels takes no argument, got "${positionals[0]}"`);
  if (values.withdraw !== undefined && values.finalize !== undefined) throw new UsageError('give either --withdraw or --finalize');
  const { rpcUrl } = readClientChain(process.env, values);
  await reportClientFailures(async () => {
    const market = await clientFrom(values, process.env, false, rpcUrl ? { rpcUrl } : {});
    const channels = await market.channels();
    const id = values.withdraw ?? values.finalize;
    if (id === undefined) {
      printJson(
        channels.map(({ config: _config, ...view }) => view),
        values.json,
      );
      return;
    }
    const channel = channels.find((c) => c.channelId.toLowerCase() === id.toLowerCase());
    if (!channel) throw new CommandFailure(`no channel ${id} in ${channelFile(values, process.env)}`);
    if (!rpcUrl) throw new CommandFailure('a withdrawal is a transaction: set MARKET_RPC_URL');
    const account = await payingAccount(values, process.env);
    if (account.address.toLowerCase() !== channel.config.payer.toLowerCase())
      throw new CommandFailure(`channel ${id} belongs to ${channel.config.payer}, not to this wallet (${account.address})`);
    const publicClient = createPublicClient({ transport: http(rpcUrl) });
    const wallet = createWalletClient({ account, transport: http(rpcUrl) });
    const contract = { address: BATCH_SETTLEMENT_ADDRESS, abi: batchSettlementAbi, chain: null, account } as const;
    let hash: Hex;
    let amount: bigint | undefined;
    if (values.withdraw !== undefined) {
      const [balance, claimed] = await publicClient.readContract({ ...contract, functionName: 'channels', args: [channel.channelId] });
      amount = balance - claimed;
      if (amount === 0n) throw new CommandFailure(`channel ${id} holds nothing unclaimed to withdraw`);
      hash = await wallet.writeContract({ ...contract, functionName: 'initiateWithdraw', args: [channel.config, amount] });
    } else {
      hash = await wallet.writeContract({ ...contract, functionName: 'finalizeWithdraw', args: [channel.config] });
    }
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new CommandFailure(`the transaction ${hash} reverted`);
    // The next call on this channel reads its balance from the chain again.
    const store = fileChannelStore(channelFile(values, process.env));
    const record = await store.get(channel.channelId);
    if (record) await store.set({ ...record, resync: true });
    printJson(
      values.withdraw !== undefined
        ? { channelId: channel.channelId, withdrawing: amount?.toString(), withdrawDelay: channel.config.withdrawDelay, transaction: hash }
        : { channelId: channel.channelId, finalized: true, transaction: hash },
      values.json,
    );
  });
}
