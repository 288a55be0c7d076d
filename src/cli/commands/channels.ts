import { parseArgs } from 'node:util';
import { type ChannelView, fileChannelStore, type SkillMarket } from 'skill-market';
import { finishWithdrawal, startWithdrawal, WithdrawalError } from '../../chain/batch-settlement/withdraw';
import { readClientChain } from '../../config';
import { readDevProfile } from '../../dev/profile';
import { CommandFailure } from '../consumer';
import { UsageError } from '../errors';
import { CLIENT_FLAGS, channelFile, clientFrom, payingAccount, printJson, reportClientFailures, WALLET_FLAGS } from '../market-client';

/**
 * `market channels [--refund ID|all | --withdraw ID | --finalize ID] [--json]`: the payment
 * channels `market call` opened (server, deposit, charged, what is yours, and with an RPC what the
 * server claimed and a pending withdrawal).
 *
 * `--refund` gets the unspent deposit back in one step: the channel's server refunds it (its
 * facilitator pays the gas: no ETH needed); when the server does not cooperate, the contract's
 * timed withdrawal starts instead (a transaction of the paying wallet, which needs ETH), to be
 * finished with `--finalize` after the channel's delay. `--withdraw` starts the timed withdrawal
 * alone. With `--dev` the chain is the dev marketplace's.
 */
export async function channelsCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: { ...CLIENT_FLAGS, ...WALLET_FLAGS, refund: { type: 'string' }, withdraw: { type: 'string' }, finalize: { type: 'string' } },
  });
  if (positionals.length > 0) throw new UsageError(`channels takes no argument, got "${positionals[0]}"`);
  const actions = [values.refund, values.withdraw, values.finalize].filter((a) => a !== undefined);
  if (actions.length > 1) throw new UsageError('give one of --refund, --withdraw or --finalize');
  const rpcUrl = readClientChain(process.env, values).rpcUrl ?? (values.dev !== undefined ? readDevProfile(values.dev).rpcUrl : undefined);
  await reportClientFailures(async () => {
    const market = await clientFrom(values, process.env, values.refund !== undefined, rpcUrl ? { rpcUrl } : {});
    const channels = await market.channels();
    if (actions.length === 0) {
      printJson(
        channels.map(({ config: _config, ...view }) => view),
        values.json,
      );
      return;
    }
    const timed = async (channel: ChannelView, step: 'start' | 'finish', refundTried = false) => {
      if (!rpcUrl) throw new CommandFailure('a timed withdrawal is a transaction: set MARKET_RPC_URL (or use --dev)');
      const account = await payingAccount(values, process.env);
      if (account.address.toLowerCase() !== channel.config.payer.toLowerCase())
        throw new CommandFailure(
          `channel ${channel.channelId} belongs to ${channel.config.payer}, not to this wallet (${account.address})`,
        );
      try {
        const target = { rpcUrl, account, config: channel.config };
        if (step === 'finish') return { channelId: channel.channelId, finalized: true, ...(await finishWithdrawal(target)) };
        const started = await startWithdrawal(target);
        // The next call on this channel reads its balance from the chain again.
        const store = fileChannelStore(channelFile(values, process.env));
        const record = await store.get(channel.channelId);
        if (record) await store.set({ ...record, resync: true });
        return {
          channelId: channel.channelId,
          withdrawing: started.amount.toString(),
          withdrawDelay: channel.config.withdrawDelay,
          transaction: started.transaction,
          finalizeFrom: new Date(Number(started.readyAt) * 1000).toISOString(),
          next: `market channels --finalize ${channel.channelId}`,
        };
      } catch (error) {
        if (!(error instanceof WithdrawalError)) throw error;
        const hint = error.code === 'no_gas' && !refundTried ? ` (or get it back from the server with --refund: no ETH needed)` : '';
        throw new CommandFailure(`channel ${channel.channelId}: ${error.message}${hint}`);
      }
    };

    if (values.refund !== undefined) {
      const chosen = values.refund === 'all' ? channels.filter(hasUnspent) : [find(channels, values.refund, values, process.env)];
      if (chosen.length === 0) throw new CommandFailure('no channel holds an unspent deposit');
      const results = [];
      for (const channel of chosen) results.push(await moneyBack(market, channel, (c) => timed(c, 'start', true)));
      printJson(values.refund === 'all' ? results : results[0], values.json);
      return;
    }
    const channel = find(channels, (values.withdraw ?? values.finalize)!, values, process.env);
    printJson(await timed(channel, values.withdraw !== undefined ? 'start' : 'finish'), values.json);
  });
}

/** A channel with a deposit the server has not charged. */
const hasUnspent = (c: ChannelView) => BigInt(c.deposit) > BigInt(c.charged) && !c.withdrawing;

function find(channels: ChannelView[], id: string, values: Parameters<typeof channelFile>[0], env: NodeJS.ProcessEnv): ChannelView {
  const channel = channels.find((c) => c.channelId.toLowerCase() === id.toLowerCase());
  if (!channel) throw new CommandFailure(`no channel ${id} in ${channelFile(values, env)}`);
  return channel;
}

/** The cooperative refund; when the server does not give it back, the timed withdrawal, saying why. */
async function moneyBack(market: SkillMarket, channel: ChannelView, withdraw: (c: ChannelView) => Promise<Record<string, unknown>>) {
  const refund = await market.refundChannel(channel.channelId);
  if (refund.status === 'refunded') return refund;
  process.stderr.write(
    `market: the server did not refund channel ${channel.channelId}: ${refund.message}; starting the timed withdrawal\n`,
  );
  return { ...(await withdraw(channel)), refundRefused: refund.message };
}
