/**
 * The payment-channel tools: the channels this server's wallet opened (what each holds of the
 * payer's), and the payer's money back in one step: the channel's server refunds what it did not
 * charge (its facilitator pays the gas), or, when it does not cooperate, the contract's timed
 * withdrawal starts (a transaction of the wallet, which needs ETH and an RPC).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ChannelView, SkillMarket } from 'skill-market/client';
import { formatPriceUsd } from 'skill-market/x402';
import type { LocalAccount } from 'viem';
import { z } from 'zod';
import { startWithdrawal, WithdrawalError } from '../../chain/batch-settlement/withdraw';
import { ToolFailure } from '../payments';
import { answer } from './result';
import { channelsOutput, moneyBackOutput } from './schemas';

export interface ChannelToolDeps {
  market: SkillMarket;
  rpcUrl: string | undefined;
  account: LocalAccount | undefined;
}

const yours = (c: ChannelView) => {
  const left = BigInt(c.deposit) - BigInt(c.charged);
  return left > 0n ? left : 0n;
};

export function registerChannelTools(server: McpServer, deps: ChannelToolDeps): void {
  const { market } = deps;
  server.registerTool(
    'payment_channels',
    {
      title: 'Payment channels',
      description:
        "The payment channels the owner's wallet opened to pay cheap skills: the server, the deposit, what the server charged, and what is the payer's (deposit − charged), which get_money_back returns.",
      inputSchema: {},
      outputSchema: channelsOutput,
      annotations: { readOnlyHint: true },
    },
    () =>
      answer(async () => {
        const channels = (await market.channels()).map((c) => ({
          channelId: c.channelId,
          server: c.endpoint ?? null,
          receiver: c.receiver,
          deposit: c.deposit,
          charged: c.charged,
          yours: yours(c).toString(),
          withdrawing: c.withdrawing ?? null,
        }));
        const lines = channels.map(
          (c) =>
            `- ${c.channelId} (${c.server ?? c.receiver}): deposited ${formatPriceUsd(BigInt(c.deposit))}, charged ${formatPriceUsd(BigInt(c.charged))}, yours ${formatPriceUsd(BigInt(c.yours))}${c.withdrawing ? `, withdrawing ${formatPriceUsd(BigInt(c.withdrawing))}` : ''}`,
        );
        return { text: channels.length === 0 ? 'No payment channels yet.' : lines.join('\n'), structured: { channels } };
      }),
  );

  server.registerTool(
    'get_money_back',
    {
      title: 'Get money back from payment channels',
      description:
        "Returns to the owner's wallet what a payment channel's server did not charge: the server refunds it (no gas needed), or, when it does not, the timed withdrawal starts (the wallet pays gas; it can be finished after the channel's delay). Without channelId, every channel holding money of the payer's.",
      inputSchema: {
        channelId: z
          .string()
          .regex(/^0x[0-9a-fA-F]{64}$/)
          .optional()
          .describe('One channel (see payment_channels); default all.'),
      },
      outputSchema: moneyBackOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ channelId }) =>
      answer(async () => {
        if (!market.address)
          throw new ToolFailure('wallet_required', 'This server has no wallet: there is no channel of its own to get money back from.');
        const all = await market.channels();
        const chosen = channelId
          ? all.filter((c) => c.channelId.toLowerCase() === channelId.toLowerCase())
          : all.filter((c) => yours(c) > 0n && !c.withdrawing);
        if (channelId && chosen.length === 0) throw new ToolFailure('channel_not_found', `No payment channel ${channelId} of this wallet.`);
        const results = [];
        for (const channel of chosen) results.push(await moneyBack(deps, channel));
        const text =
          results.length === 0 ? 'No channel holds money of yours.' : results.map((r) => `- ${r.channelId}: ${r.message}`).join('\n');
        return { text, structured: { results } };
      }),
  );
}

async function moneyBack(deps: ChannelToolDeps, channel: ChannelView) {
  const refund = await deps.market.refundChannel(channel.channelId);
  if (refund.status === 'refunded') {
    return {
      channelId: channel.channelId,
      outcome: 'refunded' as const,
      amount: refund.amount,
      transaction: refund.transaction,
      message: `${formatPriceUsd(BigInt(refund.amount))} refunded by the server (transaction ${refund.transaction}).`,
    };
  }
  const refused = (why: string) => ({
    channelId: channel.channelId,
    outcome: 'refused' as const,
    amount: null,
    transaction: null,
    message: `The server did not refund (${refund.message}); ${why}`,
  });
  if (!deps.rpcUrl || !deps.account)
    return refused('the timed withdrawal needs an RPC (MARKET_RPC_URL) and the wallet: start it with `market channels --withdraw`.');
  try {
    const started = await startWithdrawal({ rpcUrl: deps.rpcUrl, account: deps.account, config: channel.config });
    return {
      channelId: channel.channelId,
      outcome: 'withdrawal-started' as const,
      amount: started.amount.toString(),
      transaction: started.transaction,
      message: `The server did not refund (${refund.message}); the timed withdrawal of ${formatPriceUsd(started.amount)} started, to be finished from ${new Date(Number(started.readyAt) * 1000).toISOString()} with \`market channels --finalize ${channel.channelId}\`.`,
    };
  } catch (error) {
    if (error instanceof WithdrawalError) return refused(`the timed withdrawal could not start: ${error.message}.`);
    throw error;
  }
}
