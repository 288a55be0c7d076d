/**
 * The MCP server: tools for an agent to find skills, read one (its input schema included), pay
 * and call it within the owner's limits, and see the wallet, the budget and its recent calls.
 * Each tool answers a concise text and the same facts as `structuredContent`; a refusal or
 * failure is a tool error (`isError`) whose text says what happened to the money and what to do.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MarketError, type Skill, type SkillMarket } from '../../sdk/client/index';
import { formatPriceUsd } from '../../sdk/x402/index';
import { VERSION } from '../version';
import { readBalance } from './balance';
import type { McpConfig } from './config';
import type { PersistentBudget } from './ledger';
import { Payments, ToolFailure } from './payments';
import { fetchReviews } from './reviews';

export interface ServerDeps {
  market: SkillMarket;
  budget: PersistentBudget;
  config: Pick<McpConfig, 'apiUrl' | 'network' | 'assets' | 'rpcUrl' | 'limits'>;
  /** Set in discovery-only mode: how to add a wallet. */
  noWallet: string | undefined;
}

const INSTRUCTIONS = `Skill Market: paid HTTP skills an agent can call, paid per call in USDC (x402).
Find a skill with search_skills, read it with get_skill (its inputSchema tells you the input to build), then call_skill.
Every call is paid from the owner's wallet within limits they set (per-call maximum, a budget per period, an optional allow-list);
a refused call pays nothing. wallet_status shows what is left; recent_calls lists what was paid.`;

export function createMcpServer(deps: ServerDeps): McpServer {
  const { market, budget, config } = deps;
  const payments = new Payments(market, budget, config.limits, deps.noWallet);
  const server = new McpServer({ name: 'skill-market', version: VERSION }, { instructions: INSTRUCTIONS });

  server.registerTool(
    'search_skills',
    {
      title: 'Search skills',
      description:
        'Find paid skills in the marketplace by words, group and price. Returns each skill\'s slug (use it with get_skill and call_skill), name, price per call in USDC and a short description. Use an empty query to browse.',
      inputSchema: {
        query: z.string().max(200).optional().describe('Words to look for in names and descriptions, e.g. "weather forecast"; omit to browse.'),
        group: z.string().max(100).optional().describe('Only skills in this group (slug or name; see list_groups).'),
        maxPrice: z.string().max(20).optional().describe('Only skills costing at most this per call, in USD, e.g. "$0.01".'),
        sort: z.enum(['relevance', 'popular', 'newest', 'price']).optional().describe('Order of results; default relevance.'),
        limit: z.number().int().min(1).max(50).optional().describe('How many skills to return, 1-50; default 10.'),
        cursor: z.string().max(512).optional().describe('nextCursor of a previous search, for the next page.'),
      },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    (args) =>
      answer(async () => {
        const page = await market.search(args.query ?? '', {
          ...(args.group ? { group: args.group } : {}),
          ...(args.maxPrice ? { maxPrice: args.maxPrice } : {}),
          ...(args.sort ? { sort: args.sort } : {}),
          ...(args.cursor ? { cursor: args.cursor } : {}),
          limit: args.limit ?? 10,
        });
        const skills = page.skills.map(summary);
        const lines = skills.map((s) => `- ${s.slug}: ${s.name}, ${s.price}/call${s.description ? ` — ${s.description.slice(0, 120)}` : ''}`);
        const text = skills.length === 0 ? 'No skill matches.' : `${skills.length} skill(s):\n${lines.join('\n')}${page.nextCursor ? `\nMore: pass cursor "${page.nextCursor}".` : ''}`;
        return { text, structured: { skills, nextCursor: page.nextCursor ?? null } };
      }),
  );

  server.registerTool(
    'get_skill',
    {
      title: 'Skill details',
      description:
        'Everything about one skill before calling it: price per call, status, counters, and its inputSchema (JSON Schema the input of call_skill must satisfy) and outputSchema. Read this before call_skill to build valid input.',
      inputSchema: { slug: z.string().min(1).max(200).describe('The skill slug, as search_skills lists it.') },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ slug }) =>
      answer(async () => {
        const skill = await market.info(slug);
        const details = {
          ...summary(skill),
          endpoint: skill.endpoint,
          paymentAddress: skill.paymentAddress,
          inputSchema: skill.inputSchema,
          outputSchema: skill.outputSchema,
          viewCount: skill.viewCount ?? null,
          rating: null,
          ratingNote: 'The registry does not rate skills yet.',
        };
        const text = [
          `${skill.slug}: ${skill.name} — ${skill.price} per call on ${skill.network}${skill.isActive ? '' : ' (INACTIVE: cannot be called)'}`,
          skill.description ?? '',
          `Calls: ${skill.callCount ?? 0}, favorites: ${skill.favoriteCount ?? 0}. No ratings in the registry yet.`,
          `Input schema: ${skill.inputSchema ? JSON.stringify(skill.inputSchema) : 'none (any JSON object)'}`,
          `Output schema: ${skill.outputSchema ? JSON.stringify(skill.outputSchema) : 'none given'}`,
        ].filter(Boolean).join('\n');
        return { text, structured: details };
      }),
  );

  server.registerTool(
    'call_skill',
    {
      title: 'Pay and call a skill',
      description:
        "Calls a skill and pays its listed price in USDC from the owner's wallet. The input is checked against the skill's inputSchema first (see get_skill) and the owner's limits are checked before anything is signed; a refused call costs nothing and says why. Returns the skill's result and a receipt (transaction hash, amount, network).",
      inputSchema: {
        slug: z.string().min(1).max(200).describe('The skill slug.'),
        input: z.record(z.string(), z.unknown()).optional().describe("The skill's input: a JSON object satisfying its inputSchema; default {}."),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ slug, input }) =>
      answer(async () => {
        const { result, receipt, skill } = await payments.call(slug, input ?? {});
        const paid = receipt ? `Paid ${formatPriceUsd(BigInt(receipt.amount))} on ${receipt.network}, transaction ${receipt.transaction ?? 'not reported'}.` : 'The skill asked for no payment.';
        return { text: `${paid}\nResult: ${JSON.stringify(result)}`, structured: { slug: skill.slug, result, receipt } };
      }),
  );

  server.registerTool(
    'wallet_status',
    {
      title: 'Wallet and budget',
      description: "The paying wallet's address and token balance, and what has been spent in the current budget period against the owner's limits (budget, per-call maximum, allow-list).",
      inputSchema: {},
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
          balance: balance?.ok ? { amount: balance.atomic.toString(), formatted: formatPriceUsd(balance.atomic), asset: balance.asset, network: balance.network } : null,
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
          address ? `Wallet ${address}: ${balance?.ok ? `${formatPriceUsd(balance.atomic)} on ${balance.network}` : `balance unavailable (${balance?.error})`}` : `Discovery-only: no wallet (${deps.noWallet}).`,
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
      description: 'The latest calls this server paid for (newest first): skill, amount, transaction hash and whether the payment is confirmed.',
      inputSchema: { limit: z.number().int().min(1).max(100).optional().describe('How many calls, 1-100; default 20.') },
      annotations: { readOnlyHint: true },
    },
    ({ limit }) =>
      answer(async () => {
        const calls = await budget.recent(limit ?? 20);
        const lines = calls.map((c) => `- ${c.at} ${c.slug}: ${formatPriceUsd(BigInt(c.amount))}${c.transaction ? ` tx ${c.transaction}` : ''}${c.charged === 'unknown' ? ' (may have been charged)' : ''}${c.error ? ` — failed: ${c.error}` : ''}`);
        return { text: calls.length === 0 ? 'No paid calls yet.' : lines.join('\n'), structured: { calls } };
      }),
  );

  server.registerTool(
    'skill_reviews',
    {
      title: 'Skill reviews',
      description: "Reviews of a skill, as the registry publishes them. Says plainly when the registry has none.",
      inputSchema: { slug: z.string().min(1).max(200).describe('The skill slug.') },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ slug }) =>
      answer(async () => {
        await market.info(slug);
        const reviews = await fetchReviews(config.apiUrl, slug);
        if (!reviews.available) return { text: `The registry offers no reviews (${reviews.reason}).`, structured: { slug, available: false, reviews: [], note: reviews.reason } };
        return { text: reviews.items.length === 0 ? `No reviews of ${slug} yet.` : `${reviews.items.length} review(s) of ${slug}:\n${reviews.items.map((r) => `- ${JSON.stringify(r)}`).join('\n')}`, structured: { slug, available: true, reviews: reviews.items } };
      }),
  );

  server.registerTool(
    'list_groups',
    {
      title: 'Skill groups',
      description: 'The groups skills are filed under (use a group slug with search_skills).',
      inputSchema: { creator: z.string().max(100).optional().describe("Only one creator's groups (wallet address).") },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ creator }) =>
      answer(async () => {
        const groups = (await market.groups(creator ? { creator } : {})).map((g) => ({ slug: g.slug, name: g.name, description: g.description }));
        return { text: groups.length === 0 ? 'No groups.' : groups.map((g) => `- ${g.slug}: ${g.name}${g.description ? ` — ${g.description}` : ''}`).join('\n'), structured: { groups } };
      }),
  );

  return server;
}

function summary(skill: Skill) {
  return {
    slug: skill.slug,
    name: skill.name,
    description: skill.description,
    price: skill.price,
    priceAtomic: skill.priceAtomic,
    network: skill.network,
    groups: skill.groups,
    isActive: skill.isActive,
    verified: skill.verified ?? false,
    creatorAddress: skill.creatorAddress ?? null,
    callCount: skill.callCount ?? 0,
    favoriteCount: skill.favoriteCount ?? 0,
  };
}

/** Runs a tool body; every failure becomes a tool error with a readable message, never a protocol error. */
async function answer(run: () => Promise<{ text: string; structured: Record<string, unknown> }>): Promise<CallToolResult> {
  try {
    const { text, structured } = await run();
    return { content: [{ type: 'text', text }], structuredContent: structured };
  } catch (error) {
    const failure = toFailure(error);
    return {
      isError: true,
      content: [{ type: 'text', text: failure.message }],
      structuredContent: { error: { code: failure.code, message: failure.message, ...failure.details } },
    };
  }
}

function toFailure(error: unknown): ToolFailure {
  if (error instanceof ToolFailure) return error;
  if (error instanceof MarketError) {
    return new ToolFailure(error.code, `${error.message}${error.charged === 'no' ? '' : ` (charged: ${error.charged})`}`, error.code === 'invalid_input' && 'problems' in error ? { problems: error.problems } : {});
  }
  if (error instanceof TypeError) return new ToolFailure('invalid_argument', error.message.replace(/^(SkillMarket|call): /, ''));
  process.stderr.write(`market mcp: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return new ToolFailure('internal_error', `Internal error: ${(error as Error)?.message ?? String(error)}`);
}
