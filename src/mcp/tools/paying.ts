/**
 * The paying tools: call a skill within the owner's limits, the wallet and budget, and the record
 * of this server's paid calls.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { formatPriceUsd } from 'skill-market/x402';
import { readBalance } from '../balance';
import type { McpConfig } from '../config';
import type { PersistentBudget } from '../ledger';
import type { Payments } from '../payments';
import { answer } from './result';
import { callOutput, recentOutput, walletOutput } from './schemas';

export interface PayingDeps {
  payments: Payments;
  budget: PersistentBudget;
  config: Pick<McpConfig, 'network' | 'assets' | 'rpcUrl' | 'limits'>;
  noWallet: string | undefined;
}

export function registerPayingTools(server: McpServer, deps: PayingDeps): void {
  const { payments, budget, config } = deps;
  server.registerTool(
    'call_skill',
    {
      title: 'Pay and call a skill',
      description:
        "Calls a skill and pays its listed price in USDC from the owner's wallet. The input is checked against the skill's inputSchema first (see get_skill) and the owner's limits are checked before anything is signed; a refused call costs nothing and says why. Returns the skill's result and a receipt (transaction hash, amount, network).",
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
        const paid = receipt
          ? receipt.channelId
            ? `Paid ${formatPriceUsd(BigInt(receipt.amount))} on ${receipt.network} over payment channel ${receipt.channelId} (${receipt.transaction ? `this call deposited into it: transaction ${receipt.transaction}` : 'a signed voucher, no transaction'}).`
            : `Paid ${formatPriceUsd(BigInt(receipt.amount))} on ${receipt.network}, transaction ${receipt.transaction ?? 'not reported'}.`
          : 'The skill asked for no payment.';
        return { text: `${paid}\nResult: ${JSON.stringify(result)}`, structured: { slug: skill.slug, result, receipt } };
      }),
  );

  server.registerTool(
    'wallet_status',
    {
      title: 'Wallet and budget',
      description:
        "The paying wallet's address and token balance, and what has been spent in the current budget period against the owner's limits (budget, per-call maximum, allow-list).",
      inputSchema: {},
      outputSchema: walletOutput,
      annotations: { readOnlyHint: true },
    },
    () =>
      answer(async () => {
        const snapshot = await budget.snapshot();
        const { limits } = config;
        const address = payments.payer;
        const balance = address ? await readBalance(address, config) : undefined;
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
        };
        const lines = [
          address
            ? `Wallet ${address}: ${balance?.ok ? `${formatPriceUsd(balance.atomic)} on ${balance.network}` : `balance unavailable (${balance?.error})`}`
            : `Discovery-only: no wallet (${deps.noWallet}).`,
          `Spent ${formatPriceUsd(snapshot.spent)} of ${formatPriceUsd(snapshot.budget)} this ${snapshot.period} (${formatPriceUsd(snapshot.remaining)} left, resets ${snapshot.periodEnd.toISOString()}).`,
          `Per call at most ${formatPriceUsd(limits.maxPrice)}${limits.confirmAbove !== undefined ? `; above ${formatPriceUsd(limits.confirmAbove)} needs the user's confirmation` : ''}${limits.allow ? `; only ${[...limits.allow].join(', ')}` : ''}.`,
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
