/**
 * The paying tools: call a skill within the owner's limits, the wallet and budget, and the record
 * of this server's paid calls.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ChannelView } from 'skill-market/client';
import { z } from 'zod';
import { formatPriceUsd } from 'skill-market/x402';
import { readBalance } from '../balance';
import type { McpConfig } from '../config';
import type { PersistentBudget } from '../ledger';
import type { PaidResult, Payments } from '../payments';
import { answer } from './result';
import { callOutput, recentOutput, walletOutput } from './schemas';

export interface PayingDeps {
  payments: Payments;
  budget: PersistentBudget;
  config: Pick<McpConfig, 'network' | 'assets' | 'rpcUrl' | 'limits'>;
  noWallet: string | undefined;
  /** The wallet's payment channels. */
  channels: () => Promise<ChannelView[]>;
}

/** What a call paid, in words: the charge, and for a channel the deposit apart from it. */
function paidText(receipt: NonNullable<PaidResult['receipt']>): string {
  const charged = formatPriceUsd(BigInt(receipt.amount));
  if (receipt.scheme === 'upto')
    return `Charged ${charged} of at most ${receipt.price} (a usage-based price) on ${receipt.network}, transaction ${receipt.transaction ?? 'not reported'}.`;
  if (!receipt.channelId) return `Paid ${charged} on ${receipt.network}, transaction ${receipt.transaction ?? 'not reported'}.`;
  const deposit = receipt.deposit
    ? `this call first deposited ${formatPriceUsd(BigInt(receipt.deposit))} into it (refundable; each call is charged from it), transaction ${receipt.transaction ?? 'not reported'}`
    : 'a signed voucher, no transaction';
  // A channel call to a skill priced by use: what it was charged of its most.
  const most = receipt.usageBased ? ` of at most ${receipt.price} (a usage-based price)` : '';
  return `Charged ${charged}${most} on ${receipt.network} over payment channel ${receipt.channelId} (${deposit}).`;
}

export function registerPayingTools(server: McpServer, deps: PayingDeps): void {
  const { payments, budget, config } = deps;
  server.registerTool(
    'call_skill',
    {
      title: 'Pay and call a skill',
      description:
        "Calls a skill and pays its listed price in USDC from the owner's wallet (a usage-based skill, listed \"up to\" its price, is charged what the call used, at most that price). The input is checked against the skill's inputSchema first (see get_skill) and the owner's limits are checked before anything is signed; a refused call costs nothing and says why. A cheap skill is paid over a payment channel: the first call to its server deposits about ten calls' worth (refundable escrow, never above $1 nor what the budget leaves; see wallet_status and get_money_back). Returns the skill's result and a receipt (amount charged, any deposit apart from it, transaction hash, network).",
      inputSchema: {
        slug: z.string().min(1).max(2048).describe('The skill slug, or the URL of a resource search_skills found in another catalogue.'),
        input: z
          .record(z.string(), z.unknown())
          .optional()
          .describe("The skill's input: a JSON object satisfying its inputSchema; default {}."),
      },
      outputSchema: callOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ slug, input }) =>
      answer(async () => {
        const { result, receipt, skill } = await payments.call(slug, input ?? {});
        const paid = receipt ? paidText(receipt) : 'The skill asked for no payment.';
        return { text: `${paid}\nResult: ${JSON.stringify(result)}`, structured: { slug: skill.slug, result, receipt } };
      }),
  );

  server.registerTool(
    'wallet_status',
    {
      title: 'Wallet and budget',
      description:
        "The paying wallet's address and token balance, what has been spent in the current budget period against the owner's limits (budget, per-call maximum, allow-list), and what its payment channels hold (deposits are escrow, not spending).",
      inputSchema: {},
      outputSchema: walletOutput,
      annotations: { readOnlyHint: true },
    },
    () =>
      answer(async () => {
        const snapshot = await budget.snapshot();
        const { limits } = config;
        const address = payments.payer;
        // An unreadable channel file must not hide the budget: the channels line says so instead.
        const [balance, listed] = await Promise.all([
          address ? readBalance(address, config) : undefined,
          deps.channels().catch((error: Error) => error),
        ]);
        const channels = listed instanceof Error ? [] : listed;
        const sum = (pick: (c: ChannelView) => bigint) => channels.reduce((total, c) => total + pick(c), 0n);
        const deposited = sum((c) => BigInt(c.deposit));
        const charged = sum((c) => BigInt(c.charged));
        const yours = sum((c) => (BigInt(c.deposit) > BigInt(c.charged) ? BigInt(c.deposit) - BigInt(c.charged) : 0n));
        const structured = {
          address: address ?? null,
          mode: address ? 'paying' : 'discovery-only',
          balance: balance?.ok
            ? {
                amount: balance.atomic.toString(),
                formatted: formatPriceUsd(balance.atomic),
                asset: balance.asset,
                network: balance.network,
              }
            : null,
          balanceError: balance && !balance.ok ? balance.error : null,
          budget: {
            period: snapshot.period,
            periodStart: snapshot.periodStart.toISOString(),
            resetsAt: snapshot.periodEnd.toISOString(),
            limit: snapshot.budget.toString(),
            spent: snapshot.spent.toString(),
            reserved: snapshot.reserved.toString(),
            remaining: snapshot.remaining.toString(),
          },
          limits: {
            maxPricePerCall: limits.maxPrice.toString(),
            confirmAbove: limits.confirmAbove?.toString() ?? null,
            allowList: limits.allow ? [...limits.allow] : null,
          },
          channels: { count: channels.length, deposited: deposited.toString(), charged: charged.toString(), yours: yours.toString() },
        };
        const lines = [
          address
            ? `Wallet ${address}: ${balance?.ok ? `${formatPriceUsd(balance.atomic)} on ${balance.network}` : `balance unavailable (${balance?.error})`}`
            : `Discovery-only: no wallet (${deps.noWallet}).`,
          `Spent ${formatPriceUsd(snapshot.spent)} of ${formatPriceUsd(snapshot.budget)} this ${snapshot.period} (${formatPriceUsd(snapshot.remaining)} left, resets ${snapshot.periodEnd.toISOString()}).`,
          `Per call at most ${formatPriceUsd(limits.maxPrice)}${limits.confirmAbove !== undefined ? `; above ${formatPriceUsd(limits.confirmAbove)} needs the user's confirmation` : ''}${limits.allow ? `; only ${[...limits.allow].join(', ')}` : ''}.`,
          listed instanceof Error
            ? `Payment channels unreadable: ${listed.message}`
            : channels.length === 0
              ? "No payment channels yet: a cheap skill's first call deposits about ten calls' worth into one (refundable; each call is charged from it)."
              : `In ${channels.length} payment channel${channels.length === 1 ? '' : 's'}: ${formatPriceUsd(deposited)} deposited, ${formatPriceUsd(charged)} charged, ${formatPriceUsd(yours)} yours (refundable with get_money_back).`,
        ];
        return { text: lines.join('\n'), structured };
      }),
  );

  server.registerTool(
    'recent_calls',
    {
      title: 'Recent paid calls',
      description:
        'The latest calls this server paid for (newest first): skill, amount, transaction hash and whether the payment is confirmed.',
      inputSchema: { limit: z.number().int().min(1).max(100).optional().describe('How many calls, 1-100; default 20.') },
      outputSchema: recentOutput,
      annotations: { readOnlyHint: true },
    },
    ({ limit }) =>
      answer(async () => {
        const calls = await budget.recent(limit ?? 20);
        const lines = calls.map(
          (c) =>
            `- ${c.at} ${c.slug}: ${formatPriceUsd(BigInt(c.amount))}${c.transaction ? ` tx ${c.transaction}` : ''}${c.charged === 'unknown' ? ' (may have been charged)' : ''}${c.error ? ` — failed: ${c.error}` : ''}`,
        );
        return { text: calls.length === 0 ? 'No paid calls yet.' : lines.join('\n'), structured: { calls } };
      }),
  );
}
